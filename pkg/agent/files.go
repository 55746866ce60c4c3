package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// FileResult is what ImportDir did with one file.
type FileResult struct {
	Path   string
	Agent  Agent        // as registered; zero if Err is set
	Result ImportResult // "" if Err is set
	Err    error        // a *ValidationError if the template is invalid
}

// ImportDir imports for owner the template file at path or, if path is a
// directory, every *.yaml and *.yml file in it (not in its subdirectories)
// in name order. A file that fails does not stop the others: each has its
// result, and the error lists every file that failed and why. A second file
// that names an agent an earlier one imported fails rather than silently
// replace it.
func (r *Registry) ImportDir(ctx context.Context, owner, path string) ([]FileResult, error) {
	files, err := templateFiles(path)
	if err != nil {
		return nil, err
	}
	results := make([]FileResult, len(files))
	imported := map[string]string{} // agent name: the file that imported it
	var errs []error
	for i, file := range files {
		res := &results[i]
		res.Path = file
		res.Agent, res.Result, res.Err = r.importFile(ctx, owner, file, imported)
		if res.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", file, res.Err))
		}
	}
	return results, errors.Join(errs...)
}

func (r *Registry) importFile(ctx context.Context, owner, file string, imported map[string]string) (Agent, ImportResult, error) {
	t, err := ParseFile(file)
	if err != nil {
		return Agent{}, "", err
	}
	if first, ok := imported[t.Name]; ok {
		return Agent{}, "", agentgate.Errorf(agentgate.EINVALID, "agent %q was imported from %s already", t.Name, first)
	}
	a, res, err := r.Import(ctx, owner, t)
	if err == nil {
		imported[t.Name] = file
	}
	return a, res, err
}

// templateFiles returns path if it is a file, else the template files in
// the directory path.
func templateFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, agentgate.Errorf(agentgate.EINVALID, "no *.yaml or *.yml files in %s", path)
	}
	return files, nil
}

// readTemplate reads a file, but no more of it than Parse accepts: a file
// too large fails there, without being read whole.
func readTemplate(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxTemplateSize+1))
}

// ParseFile reads and parses the template in path (see Parse).
func ParseFile(path string) (*Template, error) {
	data, err := readTemplate(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

package inputschema

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetaschemasAreTheLibrarys: the embedded meta-schemas are those of the
// google/jsonschema-go in go.mod, file for file (metaschema/README.md says
// how to copy them again).
func TestMetaschemasAreTheLibrarys(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/jsonschema-go").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/google/jsonschema-go: %v", err)
	}
	lib := filepath.Join(strings.TrimSpace(string(out)), "jsonschema", "meta-schemas")
	n := 0
	err = fs.WalkDir(metaschemaFiles, "metaschema", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		ours, _ := fs.ReadFile(metaschemaFiles, name)
		theirs, err := os.ReadFile(filepath.Join(lib, filepath.FromSlash(strings.TrimPrefix(name, "metaschema/"))))
		if err != nil {
			return err
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("%s differs from the library's", name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 9 {
		t.Errorf("%d embedded files, want 9 (draft 2020-12: schema and 7 vocabularies; draft-07)", n)
	}
}

package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
	"github.com/agentgate/agentgate/pkg/store/storetest"
	"github.com/agentgate/agentgate/pkg/store/teststores"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

type fixture struct {
	st    store.Store
	clock *storetest.Clock
	reg   *Registry
}

// forEachStore runs fn on a fresh registry on each store: the embedded one
// and DynamoDB (dynalite).
func forEachStore(t *testing.T, fn func(t *testing.T, f *fixture)) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		fn(t, &fixture{st: st, clock: clock, reg: NewRegistry(st, clock.Now)})
	})
}

// importConcurrently runs n imports as alice at once, the i-th of tmpl(i),
// and counts their results.
func importConcurrently(t *testing.T, f *fixture, n int, tmpl func(i int) *Template) map[ImportResult]int {
	t.Helper()
	results := make(chan ImportResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, res, err := f.reg.Import(t.Context(), "alice", tmpl(i))
			if err != nil {
				t.Error(err)
			}
			results <- res
		})
	}
	wg.Wait()
	close(results)
	counts := map[ImportResult]int{}
	for res := range results {
		counts[res]++
	}
	return counts
}

// template returns a minimal valid template called name.
func template(name string) *Template {
	return &Template{Name: name, Description: "An agent.", Version: "1.0.0", Endpoint: "https://example.com/" + name,
		Capabilities: []Capability{{Name: "Things", Description: "Does things.", UseCases: []string{"Do a thing"}}}}
}

func (f *fixture) importAs(t *testing.T, owner string, tmpl *Template, want ImportResult) Agent {
	t.Helper()
	a, res, err := f.reg.Import(t.Context(), owner, tmpl)
	if err != nil {
		t.Fatalf("Import(%s, %s): %v", owner, tmpl.Name, err)
	}
	if res != want {
		t.Fatalf("Import(%s, %s) = %q, want %q", owner, tmpl.Name, res, want)
	}
	return a
}

// raw returns the agent's item as the table holds it.
func (f *fixture) raw(t *testing.T, name string) store.Item {
	t.Helper()
	it, err := f.st.Get(t.Context(), store.AgentKey(name))
	if err != nil {
		t.Fatalf("Get(%s): %v", name, err)
	}
	return it
}

func TestImportIsIdempotent(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		created := f.importAs(t, "alice", mustParse(t, valid), Created)
		if created.Owner != "alice" || !created.CreatedAt.Equal(f.clock.Now()) || !created.UpdatedAt.Equal(created.CreatedAt) || len(created.Digest) != 64 {
			t.Fatalf("created = %+v", created)
		}
		f.clock.Advance(time.Minute)
		again := f.importAs(t, "alice", mustParse(t, valid), Unchanged)
		if again.Digest != created.Digest || !again.UpdatedAt.Equal(created.UpdatedAt) {
			t.Fatalf("unchanged import = %+v, want the record of %+v", again, created)
		}
		if it := f.raw(t, "weather"); it.Version != 1 || it.Index1 != store.AgentsIndex("weather") {
			t.Fatalf("item after an unchanged import: version %d, index %+v; want version 1 in the agents index", it.Version, it.Index1)
		}
		got, err := f.reg.Get(t.Context(), "weather")
		if err != nil {
			t.Fatal(err)
		}
		if got.Digest != created.Digest || got.Template.Playbooks[0].InputSchema["type"] != "object" || !got.Template.PublicCard {
			t.Fatalf("Get = %+v", got)
		}
	})
}

func TestImportUpdatesAChange(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		created := f.importAs(t, "alice", mustParse(t, valid), Created)
		f.clock.Advance(time.Minute)
		changed := mustParse(t, valid)
		changed.Description = "Answers questions about the weather, briefly."
		updated := f.importAs(t, "alice", changed, Updated)
		if updated.Digest == created.Digest || !updated.CreatedAt.Equal(created.CreatedAt) || !updated.UpdatedAt.Equal(f.clock.Now()) {
			t.Fatalf("updated = %+v after %+v", updated, created)
		}
		if it := f.raw(t, "weather"); it.Version != 2 {
			t.Fatalf("version after an update = %d, want 2", it.Version)
		}
		got, err := f.reg.Get(t.Context(), "weather")
		if err != nil {
			t.Fatal(err)
		}
		if got.Template.Description != changed.Description || got.Digest != updated.Digest {
			t.Fatalf("Get after update = %+v", got)
		}
		f.importAs(t, "alice", changed, Unchanged)
	})
}

func TestImportRefusesAnotherOwnersAgent(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		f.importAs(t, "alice", template("weather"), Created)
		for _, tmpl := range []*Template{template("weather"), mustParse(t, valid)} { // the same, and a change
			_, res, err := f.reg.Import(t.Context(), "bob", tmpl)
			if code := agentgate.ErrorCode(err); code != agentgate.EFORBIDDEN || res != "" {
				t.Fatalf("bob's import = %q, %v (%s); want %s", res, err, code, agentgate.EFORBIDDEN)
			}
			if msg := agentgate.ErrorMessage(err); !strings.Contains(msg, `agent "weather" belongs to another owner`) {
				t.Fatalf("message %q does not say why", msg)
			}
		}
		if got, err := f.reg.Get(t.Context(), "weather"); err != nil || got.Owner != "alice" || got.Template.Description != "An agent." {
			t.Fatalf("after bob's imports: %+v, %v", got, err)
		}
	})
}

func TestImportConcurrentFirstImports(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		const n = 8
		counts := importConcurrently(t, f, n, func(int) *Template { return mustParse(t, valid) })
		if counts[Created] != 1 || counts[Unchanged] != n-1 {
			t.Fatalf("results = %v, want one created and %d unchanged", counts, n-1)
		}
		if it := f.raw(t, "weather"); it.Version != 1 {
			t.Fatalf("version = %d, want 1", it.Version)
		}
	})
}

// Concurrent imports of different versions of one agent each land once: the
// compare-and-set retries lose no update.
func TestImportConcurrentChanges(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		const n = 8
		counts := importConcurrently(t, f, n, func(i int) *Template {
			tmpl := template("weather")
			tmpl.Description = fmt.Sprintf("Version %d.", i)
			return tmpl
		})
		if counts[Created] != 1 || counts[Updated] != n-1 {
			t.Fatalf("results = %v, want one created and %d updated", counts, n-1)
		}
		if it := f.raw(t, "weather"); it.Version != n {
			t.Fatalf("version = %d, want %d", it.Version, n)
		}
	})
}

func TestImportRefusesInvalid(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		bad := template("weather")
		bad.Version = "latest"
		_, _, err := f.reg.Import(t.Context(), "alice", bad)
		wantProblems(t, err, "version: must be a semantic version")
		_, _, err = f.reg.Import(t.Context(), "", template("weather"))
		if code := agentgate.ErrorCode(err); code != agentgate.EINVALID {
			t.Fatalf("import without an owner: %v (%s)", err, code)
		}
		if agents, _, err := f.reg.List(t.Context(), "", 0); err != nil || len(agents) != 0 {
			t.Fatalf("refused imports stored %d agents (%v)", len(agents), err)
		}
	})
}

func TestGetMissing(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		_, err := f.reg.Get(t.Context(), "nope")
		if code := agentgate.ErrorCode(err); code != agentgate.ENOTFOUND {
			t.Fatalf("Get(nope): %v (%s), want %s", err, code, agentgate.ENOTFOUND)
		}
		if msg := agentgate.ErrorMessage(err); msg != `no agent "nope"` {
			t.Fatalf("message = %q", msg)
		}
	})
}

func TestDelete(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		f.importAs(t, "alice", template("gone"), Created)
		f.importAs(t, "alice", template("kept"), Created)
		if err := f.reg.Delete(t.Context(), "gone"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.reg.Get(t.Context(), "gone"); agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
			t.Fatalf("Get after Delete: %v, want not found", err)
		}
		agents, _, err := f.reg.List(t.Context(), "", 0)
		if err != nil || len(agents) != 1 || agents[0].Template.Name != "kept" {
			t.Fatalf("List after Delete = %v, %v; want kept alone", agents, err)
		}
		// Absent agents and names no agent may have are not errors.
		for _, name := range []string{"gone", "never", "Not A Name", strings.Repeat("x", 300)} {
			if err := f.reg.Delete(t.Context(), name); err != nil {
				t.Errorf("Delete(%.20q): %v", name, err)
			}
		}
		// The name is free again: registering it anew starts a new record,
		// for anyone.
		f.clock.Advance(time.Minute)
		again := f.importAs(t, "bob", template("gone"), Created)
		if again.Owner != "bob" || !again.CreatedAt.Equal(f.clock.Now()) {
			t.Fatalf("re-registered = %+v", again)
		}
		if it := f.raw(t, "gone"); it.Version != 1 {
			t.Fatalf("re-registered record version %d, want 1", it.Version)
		}
	})
}

func TestListPages(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		for _, name := range []string{"e", "c-2", "a", "d", "c-1"} {
			f.importAs(t, "alice", template(name), Created)
		}
		want := []string{"a", "c-1", "c-2", "d", "e"}
		var got []string
		pages := 0
		for cursor := ""; ; {
			agents, next, err := f.reg.List(t.Context(), cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, a := range agents {
				got = append(got, a.Template.Name)
			}
			if cursor = next; cursor == "" {
				break
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || pages < 3 {
			t.Fatalf("listed %v in %d pages, want %v in at least 3", got, pages, want)
		}
	})
}

func TestImportDir(t *testing.T) {
	forEachStore(t, func(t *testing.T, f *fixture) {
		dir := t.TempDir()
		files := map[string]string{
			"a-weather.yaml": valid,
			"b-bad.yml":      "name: Bad\ndescription: ''\nversion: '1'\nendpoint: x\ncapabilities: []\n",
			"c-again.yaml":   valid, // names the agent a-weather.yaml imported
			"d-typo.yaml":    "name: typo\ndescripton: x\n",
			"e-other.yaml":   "name: other\ndescription: d\nversion: 0.1.0\nendpoint: http://127.0.0.1:9/\ncapabilities: [{name: c, description: d, use_cases: [u]}]\n",
			"notes.txt":      "not a template",
		}
		for name, src := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o700); err != nil {
			t.Fatal(err)
		}
		results, err := f.reg.ImportDir(t.Context(), "alice", dir)
		want := []struct {
			file   string
			result ImportResult
			err    string
		}{
			{"a-weather.yaml", Created, ""},
			{"b-bad.yml", "", "name: must be 1 to 63 lower-case letters, digits and hyphens, starting with a letter or digit; description: required; version: must be a semantic version like 1.2.3; endpoint: must be an absolute http(s) URL; capabilities: required"},
			{"c-again.yaml", "", `agent "weather" was imported from ` + filepath.Join(dir, "a-weather.yaml") + " already"},
			{"d-typo.yaml", "", "line 2: field descripton not found in type agent.Template"},
			{"e-other.yaml", Created, ""},
		}
		if len(results) != len(want) {
			t.Fatalf("results = %+v, want %d", results, len(want))
		}
		for i, w := range want {
			r := results[i]
			if r.Path != filepath.Join(dir, w.file) || r.Result != w.result || (r.Err == nil) != (w.err == "") ||
				r.Err != nil && !strings.Contains(r.Err.Error(), w.err) {
				t.Errorf("results[%d] = %+v, want %+v", i, r, w)
			}
			if w.err != "" && !strings.Contains(fmt.Sprint(err), w.file+": ") {
				t.Errorf("error %q does not list %s", err, w.file)
			}
		}
		if code := agentgate.ErrorCode(err); code != agentgate.EINVALID {
			t.Errorf("error code = %q, want %q", code, agentgate.EINVALID)
		}

		// Again: all that imported is unchanged.
		results, _ = f.reg.ImportDir(t.Context(), "alice", dir)
		if results[0].Result != Unchanged || results[4].Result != Unchanged {
			t.Fatalf("second import: %+v", results)
		}
		// One file.
		results, err = f.reg.ImportDir(t.Context(), "alice", filepath.Join(dir, "e-other.yaml"))
		if err != nil || len(results) != 1 || results[0].Result != Unchanged {
			t.Fatalf("importing one file: %+v, %v", results, err)
		}
		// Nothing to import.
		for _, path := range []string{filepath.Join(dir, "sub.yaml"), filepath.Join(dir, "missing")} {
			if results, err := f.reg.ImportDir(t.Context(), "alice", path); err == nil || results != nil {
				t.Errorf("ImportDir(%s) = %+v, %v; want an error", path, results, err)
			}
		}
	})
}

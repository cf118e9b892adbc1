package explain

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func text(t *testing.T, r *Report) string {
	t.Helper()
	var b strings.Builder
	if err := r.WriteText(&b, 20); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// planted is an A/B of the synthetic program with main.warm 60 % slower.
func planted(t *testing.T) (base, exp []Fork, r *Report) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 5))
	after := program()
	after["main.warm"] += 150
	base, exp = side(rng, 5, program(), 5*fork1s, 0.01), side(rng, 5, after, 4*fork1s, 0.01) // fewer ops: Write scales
	r, err := Diff(base, exp, 0.05, Level{})
	if err != nil {
		t.Fatal(err)
	}
	return base, exp, r
}

// Write leaves profiles that go tool pprof reads, the difference among
// them, the text report and the flame graph.
func TestWriteReadByPprof(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to run go tool pprof")
	}
	base, exp, r := planted(t)
	dir := t.TempDir()
	if err := Write(dir, "BenchmarkSynthetic", base, exp, r); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-top", filepath.Join(dir, DiffFile)},
		{"-top", "-diff_base", filepath.Join(dir, BaseFile), filepath.Join(dir, ExperimentFile)},
	} {
		out, err := exec.Command("go", append([]string{"tool", "pprof"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
		}
		top := topLine(string(out))
		if !strings.Contains(top, "main.warm") || strings.Contains(top, " -") {
			t.Errorf("go tool pprof %v: the top row is %q, want main.warm grown\n%s", args, top, out)
		}
	}
	txt, err := os.ReadFile(filepath.Join(dir, TextFile))
	if err != nil || !strings.Contains(string(txt), "warm") || !strings.HasPrefix(string(txt), "BenchmarkSynthetic") {
		t.Errorf("text report (%v):\n%s", err, txt)
	}
	if _, err := os.Stat(filepath.Join(dir, FlameFile)); err != nil {
		t.Error(err)
	}
	var back ReportJSON
	if b, err := os.ReadFile(filepath.Join(dir, JSONFile)); err != nil || json.Unmarshal(b, &back) != nil {
		t.Fatalf("explain.json: %v\n%s", err, b)
	}
	if len(back.Functions) != len(r.Functions) || back.Functions[0].Name != r.Functions[0].Name || back.Functions[0].Named != r.Functions[0].Named ||
		back.Whole == nil || *back.Whole != r.Whole || back.Functions[0].Share == nil || *back.Functions[0].Share != r.Functions[0].Share {
		t.Errorf("explain.json: %+v, want the report's functions, their order, names and shares, and its whole change %v", back, r.Whole)
	}
	for _, f := range back.Functions {
		if f.Base == 0 && f.Exp == 0 && f.Share == nil {
			t.Errorf("%s: a share of 0 flat time is 0, not undefined", f.Name)
		}
	}
}

// topLine is the first row of pprof's -top table.
func topLine(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.Contains(l, "flat%") && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	return ""
}

// The flame graph is one valid XML document that references nothing
// outside itself, and the planted function is in it, coloured as grown.
func TestFlameSVG(t *testing.T) {
	base, exp, r := planted(t)
	var b bytes.Buffer
	if err := FlameSVG(&b, "A & B <synthetic>", base, exp, r); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, "<script") || strings.Contains(s, "href") {
		t.Error("the SVG has a script or a link")
	}
	classOf := map[string]string{}
	d := xml.NewDecoder(&b)
	var group string
	inTitle := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not valid XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "g":
				group = attr(tok, "class")
			case "title":
				inTitle = true
			}
		case xml.EndElement:
			inTitle = inTitle && tok.Name.Local != "title"
		case xml.CharData:
			if inTitle {
				name, _, _ := strings.Cut(string(tok), ":")
				classOf[name] = group
			}
		}
	}
	if classOf["main.warm"] != "grew" || classOf["main.run"] != "grew" {
		t.Errorf("main.warm is %q and its caller main.run %q, want both grew", classOf["main.warm"], classOf["main.run"])
	}
	if classOf["main.hot"] != "same" {
		t.Errorf("main.hot, unchanged, is %q", classOf["main.hot"])
	}
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

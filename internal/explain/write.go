package explain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/pprof/profile"
)

// The files Write leaves in a case's directory.
const (
	BaseFile       = "base.pb.gz"       // the baseline's forks merged
	ExperimentFile = "experiment.pb.gz" // the experiment's, scaled to the baseline's ops
	DiffFile       = "diff.pb.gz"       // experiment minus baseline, as pprof's -diff_base makes it
	TextFile       = "explain.txt"
	JSONFile       = "explain.json" // the Report, for machines
	FlameFile      = "flame.svg"
)

// Write leaves in dir both sides' merged profiles, the experiment's
// scaled to the baseline's op count, so `go tool pprof -diff_base
// base.pb.gz experiment.pb.gz` shows the change per op; diff.pb.gz, the
// same difference in one file (the baseline's samples negated and
// labelled pprof::base, as pprof's -diff_base does), which `go tool pprof
// -top diff.pb.gz` reads; the text report of r (every function); and the
// differential flame graph.
func Write(dir, title string, base, exp []Fork, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, bops, err := merged(base)
	if err != nil {
		return fmt.Errorf("merging the baseline's profiles: %w", err)
	}
	e, eops, err := merged(exp)
	if err != nil {
		return fmt.Errorf("merging the experiment's profiles: %w", err)
	}
	e.Scale(float64(bops) / float64(eops))
	d, err := difference(b, e)
	if err != nil {
		return fmt.Errorf("the difference profile: %w", err)
	}
	for name, p := range map[string]*profile.Profile{BaseFile: b, ExperimentFile: e, DiffFile: d} {
		if err := writeProfile(filepath.Join(dir, name), p); err != nil {
			return err
		}
	}
	if err := writeReport(dir, title, TextFile, JSONFile, func(w io.Writer) error { return r.WriteText(w, len(r.Functions)) }, r.JSON()); err != nil {
		return err
	}
	var svg bytes.Buffer
	if err := FlameSVG(&svg, title, base, exp, r); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, FlameFile), svg.Bytes(), 0o644)
}

// merged is one profile of a side's forks and the ops they measured.
func merged(forks []Fork) (*profile.Profile, int64, error) {
	var ps []*profile.Profile
	var ops int64
	for _, f := range forks {
		ps = append(ps, f.Profile) // Merge returns a profile independent of them
		ops += f.Ops
	}
	if len(ps) == 0 {
		return nil, 0, fmt.Errorf("no profile")
	}
	p, err := profile.Merge(ps)
	return p, ops, err
}

// difference is e minus b in one profile: b's samples negated and
// labelled pprof::base=true, as pprof marks a -diff_base.
func difference(b, e *profile.Profile) (*profile.Profile, error) {
	neg := b.Copy()
	neg.Scale(-1)
	for _, s := range neg.Sample {
		if s.Label == nil {
			s.Label = map[string][]string{}
		}
		s.Label["pprof::base"] = []string{"true"}
	}
	return profile.Merge([]*profile.Profile{e, neg})
}

func writeProfile(path string, p *profile.Profile) error {
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// The files WriteInstructions leaves in a case's directory.
const (
	InstructionsTextFile = "instructions.txt"
	InstructionsJSONFile = "instructions.json"
)

// WriteInstructions leaves in dir r's text report (every function with a
// change, and the top function's lines) and r as JSON.
func WriteInstructions(dir, title string, r *InstructionsReport) error {
	return writeReport(dir, title, InstructionsTextFile, InstructionsJSONFile, func(w io.Writer) error { return r.WriteText(w, len(r.Functions)) }, r)
}

// writeReport leaves in dir a report's text, under its title, as text,
// and v as JSON.
func writeReport(dir, title, text, jsonFile string, write func(io.Writer) error, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\n", title)
	if err := write(&b); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, text), b.Bytes(), 0o644); err != nil {
		return err
	}
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, jsonFile), append(js, '\n'), 0o644)
}

// The files WriteAllocs leaves in a case's directory.
const (
	AllocsTextFile = "allocs.txt"
	AllocsJSONFile = "allocs.json"
)

// WriteAllocs leaves in dir r's text report and r as JSON.
func WriteAllocs(dir, title string, r *AllocsReport) error {
	return writeReport(dir, title, AllocsTextFile, AllocsJSONFile, func(w io.Writer) error { return r.WriteText(w, len(r.Functions)) }, r)
}

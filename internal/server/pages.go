package server

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/internal/chart"
	"github.com/ledgerbench/ledgerbench/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

var pageFuncs = template.FuncMap{
	"scale": func(v float64, unit string) string {
		return benchunit.Scale(v, benchunit.ClassOf(unit))
	},
	"short": func(s string) string {
		if len(s) > 10 {
			return s[:10]
		}
		return s
	},
	"pct":  func(v float64) string { return fmt.Sprintf("%+.1f %%", v) },
	"date": runDate,
	"seriesURL": func(k store.SeriesKey) string {
		return "/series?" + url.Values{"machine": {k.Machine}, "pkg": {k.Pkg}, "benchmark": {k.Benchmark}, "unit": {k.Unit}}.Encode()
	},
	"acrossURL": func(k store.SeriesKey) string {
		return "/across?" + url.Values{"pkg": {k.Pkg}, "benchmark": {k.Benchmark}, "unit": {k.Unit}}.Encode()
	},
	"chartURL": func(k store.SeriesKey) string {
		return "/chart.svg?" + url.Values{"machine": {k.Machine}, "pkg": {k.Pkg}, "benchmark": {k.Benchmark}, "unit": {k.Unit}}.Encode()
	},
	"runURL":  func(r store.Run) string { return fmt.Sprintf("/raw/%s/%d", url.PathEscape(r.Upload), r.Part) },
	"pathesc": url.PathEscape,
	// bisect is the command that finds the commit of an open regression
	// (a go test benchmark's also takes its package pattern).
	"bisect": func(c regressionRow) string {
		return history.BisectCommand("benchctl", c.Before.Commit, c.After.Commit, c.Benchmark, c.Unit, nil)
	},
	// share is a bisection's part of the whole change ("" when not
	// measured).
	"share": func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return fmt.Sprintf("%.0f %% of the change", 100*x)
	},
	"add": func(a, b, c int) int { return a + b + c },
}

// pages are the dashboard's templates, parsed when a server first
// registers its pages rather than at package init: every benchmark fork
// is this same program, and a parse at init put 195 KB in 3,519 objects
// on each fork's heap for its garbage collector to mark.
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(pageFuncs).ParseFS(templateFS, "templates/*.html"))
})

func (s *Server) pages(mux *http.ServeMux) {
	pages() // a broken template fails the server's start, not its first page
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("GET /machine/{id}", s.machine)
	mux.HandleFunc("GET /series", s.seriesPage)
	mux.HandleFunc("GET /chart.svg", s.chart)
	mux.HandleFunc("GET /across", s.across)
	mux.HandleFunc("GET /upload/{id}", s.uploadPage)
	mux.HandleFunc("GET /regressions", s.regressions)
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	var b bytes.Buffer
	if err := pages().ExecuteTemplate(&b, name, data); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	ms, err := s.Store.Machines(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q, _ := store.ParseQuery("")
	ups, err := s.Store.ListUploads(r.Context(), q, []string{"machine-id", "commit", "experiment-commit", "toolchain", "upload-file", "upload-time", "by"}, 20)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, "home.html", map[string]any{"Title": "machines", "Machines": ms, "Uploads": ups})
}

// SeriesPerPage is the series a machine's page lists at once.
const SeriesPerPage = 200

func (s *Server) machine(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ms, err := s.Store.Machines(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var m *store.Machine
	for i := range ms {
		if ms[i].ID == id {
			m = &ms[i]
		}
	}
	if m == nil {
		s.fail(w, r, fmt.Errorf("%w: no machine %q", store.ErrNotFound, id))
		return
	}
	cps, err := s.Store.Regressions(r.Context(), id, 500)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pg := 1
	if v := r.FormValue("page"); v != "" {
		if pg, err = strconv.Atoi(v); err != nil || pg < 1 {
			s.fail(w, r, fmt.Errorf("%w: page %q: want 1 or more", errBadRequest, v))
			return
		}
	}
	// Series with an open regression first, a page at a time.
	series, total, pending, err := s.Store.MachineSeriesPage(r.Context(), id, (pg-1)*SeriesPerPage, SeriesPerPage)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	npages := max(1, (total+SeriesPerPage-1)/SeriesPerPage)
	if pg > npages {
		s.fail(w, r, fmt.Errorf("%w: page %d of %d", store.ErrNotFound, pg, npages))
		return
	}
	var openCPs, other []store.ChangePoint
	for _, c := range cps {
		if c.Open {
			openCPs = append(openCPs, c)
		} else {
			other = append(other, c)
		}
	}
	open, err := s.openRows(r.Context(), openCPs)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, "machine.html", map[string]any{"Title": id, "Machine": m, "Open": open, "Other": other, "Series": series, "Pending": pending,
		"Total": total, "Page": pg, "Pages": npages, "First": (pg-1)*SeriesPerPage + 1})
}

// openRows are a machine's open regressions with their bisections and
// small charts.
func (s *Server) openRows(ctx context.Context, cps []store.ChangePoint) ([]regressionRow, error) {
	bis, err := s.Store.BisectionsOf(ctx, cps)
	if err != nil {
		return nil, err
	}
	rows := make([]regressionRow, len(cps))
	for i, c := range cps {
		rows[i] = regressionRow{ChangePoint: c, Bisection: bis[i]}
	}
	return rows, s.sparks(ctx, rows)
}

// regressionRow is an open regression with what its bisection found
// (nil: none uploaded) and a small chart of its series' latest runs
// (empty past a page's MaxSparks rows).
type regressionRow struct {
	store.ChangePoint
	Bisection *store.Bisection
	Spark     template.HTML
}

// A page's first MaxSparks regression rows carry a small chart of their
// series' latest SparkRuns runs.
const (
	MaxSparks = 100
	SparkRuns = 30
)

// sparks draws the small charts of rows: each run a dot whose tooltip
// names its commit, date and value, the runs from the shift on in red.
func (s *Server) sparks(ctx context.Context, rows []regressionRow) error {
	n := min(len(rows), MaxSparks)
	cps := make([]store.ChangePoint, n)
	for i := range n {
		cps[i] = rows[i].ChangePoint
	}
	recent, err := s.Store.Recent(ctx, cps, SparkRuns)
	if err != nil {
		return err
	}
	for i, pts := range recent {
		c := &rows[i]
		values, tips, shift := make([]float64, len(pts)), make([]string, len(pts)), -1
		for j, p := range pts {
			values[j] = p.Value
			tips[j] = runTip(p, c.Unit)
			if shift < 0 && !p.At.Before(c.After.At) {
				shift = j
			}
		}
		c.Spark = template.HTML(chart.Sparkline(values, shift, tips, fmt.Sprintf("the latest %d runs of %s %s on %s", len(pts), c.Benchmark, c.Unit, c.Machine)))
	}
	return nil
}

// readSeries reads the series the request names, or answers the error.
func (s *Server) readSeries(w http.ResponseWriter, r *http.Request) (*store.Series, bool) {
	k, err := s.seriesKey(r)
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	ser, err := s.Store.Series(r.Context(), k)
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	return ser, true
}

// envChanges are the indexes of the points whose env-id differs from
// the point before.
func envChanges(pts []store.SeriesPoint) map[int]bool {
	out := map[int]bool{}
	for i := 1; i < len(pts); i++ {
		if pts[i].EnvID != pts[i-1].EnvID {
			out[i] = true
		}
	}
	return out
}

func (s *Server) seriesPage(w http.ResponseWriter, r *http.Request) {
	ser, ok := s.readSeries(w, r)
	if !ok {
		return
	}
	type row struct {
		store.SeriesPoint
		Change, Env bool
	}
	starts := map[time.Time]bool{}
	for _, c := range ser.ChangePoints {
		starts[c.After.At] = true
	}
	env := envChanges(ser.Points)
	rows := make([]row, len(ser.Points))
	for i, p := range ser.Points {
		rows[len(rows)-1-i] = row{SeriesPoint: p, Change: starts[p.At], Env: env[i]}
	}
	// The chart inline, so that its runs' tooltips show (an image's do
	// not, and the pages may not be framed).
	svg, err := seriesChart(ser)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	svg = svg[max(bytes.Index(svg, []byte("<svg")), 0):]
	s.render(w, r, "series.html", map[string]any{"Title": ser.Benchmark, "Series": ser, "Rows": rows, "Chart": template.HTML(svg)})
}

func (s *Server) chart(w http.ResponseWriter, r *http.Request) {
	ser, ok := s.readSeries(w, r)
	if !ok {
		return
	}
	svg, err := seriesChart(ser)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Write(svg)
}

// seriesChart draws a series with its change points and env-id changes,
// its runs' fork ranges as a band, each run's tooltip its commit, date
// and value.
func seriesChart(ser *store.Series) ([]byte, error) {
	values := make([]float64, len(ser.Points))
	at := make([]time.Time, len(ser.Points))
	tips := make([]string, len(ser.Points))
	band := &chart.Band{Lo: make([]float64, len(ser.Points)), Hi: make([]float64, len(ser.Points))}
	index := map[time.Time]int{}
	for i, p := range ser.Points {
		values[i], at[i] = p.Value, p.At
		band.Lo[i], band.Hi[i] = p.Lo, p.Hi
		index[p.At] = i
		tips[i] = runTip(p, ser.Unit)
	}
	var env []int
	for i := range envChanges(ser.Points) {
		env = append(env, i)
	}
	sort.Ints(env)
	var cps []int
	for _, c := range ser.ChangePoints {
		if i, ok := index[c.After.At]; ok {
			cps = append(cps, i)
		}
	}
	return chart.SeriesSVG(ser.Benchmark+" on "+ser.Machine, ser.Unit, at, values, band, cps, env, tips)
}

func (s *Server) across(w http.ResponseWriter, r *http.Request) {
	k := store.SeriesKey{Pkg: r.FormValue("pkg"), Benchmark: r.FormValue("benchmark"), Unit: r.FormValue("unit")}
	if k.Unit == "" {
		k.Unit = "sec/op"
	}
	if k.Benchmark == "" {
		s.fail(w, r, fmt.Errorf("%w: want benchmark=NAME (and pkg=, unit=)", errBadRequest))
		return
	}
	xs, err := s.Store.Across(r.Context(), k.Pkg, k.Benchmark, k.Unit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, "across.html", map[string]any{"Title": k.Benchmark + " across machines", "Key": k, "Series": xs})
}

// FilesPerPage is the files an upload's page shows at once: each is read
// and, for an A/B file, compared (20,000 on one page took 3.2 s and
// 3.2 MB).
const FilesPerPage = 100

// uploadFile is one file of an upload's page.
type uploadFile struct {
	Part        int
	Name        string
	Size        int
	Table       template.HTML
	TableErr    string
	Results     int
	MachineID   string
	Baseline    string
	Experiment  string
	IsAB        bool
	RawURL      string
	PlainTables string
}

// uploadPage shows an upload's files, FilesPerPage at a time (?page=N),
// and, for an A/B file (toolchain baseline and experiment), the
// pull-request table benchctl ab prints.
func (s *Server) uploadPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	pg := 1
	if v := r.FormValue("page"); v != "" {
		var err error
		if pg, err = strconv.Atoi(v); err != nil || pg < 1 {
			s.fail(w, r, fmt.Errorf("%w: page %q: want 1 or more", errBadRequest, v))
			return
		}
	}
	parts, err := s.Store.Parts(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	first := (pg - 1) * FilesPerPage
	if first >= parts {
		s.fail(w, r, fmt.Errorf("%w: upload %s has no page %d", store.ErrNotFound, id, pg))
		return
	}
	var files []uploadFile
	for part := first; part < min(parts, first+FilesPerPage); part++ {
		name, data, err := s.Store.Contents(r.Context(), id, part)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		files = append(files, readUploadFile(id, part, name, data))
	}
	s.render(w, r, "upload.html", map[string]any{"Title": "upload " + id, "ID": id, "Files": files, "Page": pg,
		"More": first+FilesPerPage < parts, "First": first})
}

// readUploadFile reads one file of an upload for its page.
func readUploadFile(id string, part int, name string, data []byte) uploadFile {
	f := uploadFile{Part: part, Name: name, Size: len(data), RawURL: fmt.Sprintf("/raw/%s/%d", url.PathEscape(id), part)}
	rd := benchfmt.NewReader(bytes.NewReader(data), name)
	commits := map[string]string{}
	for rd.Scan() {
		if res, ok := rd.Result().(*benchfmt.Result); ok {
			f.Results++
			f.MachineID = res.GetConfig("machine-id")
			if tc := res.GetConfig("toolchain"); tc != "" {
				commits[tc] = res.GetConfig(tc + "-commit")
			}
		}
	}
	f.Baseline, f.Experiment = commits["baseline"], commits["experiment"]
	_, hasBase := commits["baseline"]
	_, hasExp := commits["experiment"]
	if !hasBase || !hasExp {
		return f
	}
	f.IsAB = true
	ts, err := compare.BuildData(name, data, compare.Options{Col: "toolchain", Baseline: "baseline"})
	if err != nil {
		f.TableErr = err.Error()
		return f
	}
	var md bytes.Buffer
	names := []string{"baseline (" + shortCommit(f.Baseline) + ")", "experiment (" + shortCommit(f.Experiment) + ")"}
	if err := ts.Markdown(&md, names); err != nil {
		f.TableErr = err.Error()
	}
	f.Table = markdownHTML(md.String())
	f.PlainTables = md.String()
	return f
}

// runTip is a run's tooltip in a chart: its commit, date and value.
func runTip(p store.SeriesPoint, unit string) string {
	return fmt.Sprintf("%s · %s · %s %s", shortCommit(p.Commit), runDate(p.At), benchunit.Scale(p.Value, benchunit.ClassOf(unit)), unit)
}

// runDate is a run's time, to the second when it is not on a minute
// (runs a few seconds apart read apart).
func runDate(t time.Time) string {
	if t.Second() != 0 {
		return t.UTC().Format("2006-01-02 15:04:05")
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// markdownHTML renders the Markdown compare writes — headings, pipe
// tables, block quotes and paragraphs — as HTML, escaping all text.
func markdownHTML(md string) template.HTML {
	var b strings.Builder
	esc := template.HTMLEscapeString
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		switch {
		case line == "":
		case strings.HasPrefix(line, "<details><summary>") && strings.HasSuffix(line, "</summary>"):
			summary := strings.TrimSuffix(strings.TrimPrefix(line, "<details><summary>"), "</summary>")
			fmt.Fprintf(&b, "<details><summary>%s</summary>", esc(summary))
		case line == "</details>":
			b.WriteString("</details>")
		case strings.HasPrefix(line, "```"):
			b.WriteString("<pre>")
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				b.WriteString(esc(lines[i]) + "\n")
			}
			b.WriteString("</pre>")
		case strings.HasPrefix(line, "|"):
			b.WriteString("<table class=\"ab\">")
			header := true
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				cells := strings.Split(strings.Trim(strings.TrimSpace(lines[i]), "|"), "|")
				if isRule(cells) {
					continue
				}
				tag := "td"
				if header {
					tag = "th"
				}
				b.WriteString("<tr>")
				for _, c := range cells {
					fmt.Fprintf(&b, "<%s>%s</%s>", tag, esc(strings.TrimSpace(c)), tag)
				}
				b.WriteString("</tr>")
				header = false
			}
			i--
			b.WriteString("</table>")
		case strings.HasPrefix(line, "#"):
			fmt.Fprintf(&b, "<h3>%s</h3>", esc(strings.TrimLeft(line, "# ")))
		case strings.HasPrefix(line, ">"):
			fmt.Fprintf(&b, "<blockquote>%s</blockquote>", esc(strings.TrimLeft(line, "> ")))
		default:
			fmt.Fprintf(&b, "<p>%s</p>", bold(esc(line)))
		}
	}
	return template.HTML(b.String())
}

// bold renders **x** (in escaped text) as <b>x</b>.
func bold(s string) string {
	for {
		i := strings.Index(s, "**")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i+2:], "**")
		if j < 0 {
			return s
		}
		s = s[:i] + "<b>" + s[i+2:i+2+j] + "</b>" + s[i+4+j:]
	}
}

func isRule(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(strings.TrimSpace(c), ":-") != "" {
			return false
		}
	}
	return len(cells) > 0
}

// MaxRegressions bounds the fleet-wide regressions page.
const MaxRegressions = 1000

// regressionGroup is one benchmark's open regressions, on every machine
// where it regressed.
type regressionGroup struct {
	Pkg, Benchmark, Unit string
	Points               []*regressionRow
}

// regressions is the fleet's open regressions, grouped by benchmark and
// unit (the same benchmark regressing on several machines is one group,
// the most machines first), filtered by ?pkg= and ?since=YYYY-MM-DD.
func (s *Server) regressions(w http.ResponseWriter, r *http.Request) {
	pkg, sinceText := r.FormValue("pkg"), r.FormValue("since")
	var since time.Time
	if sinceText != "" {
		var err error
		if since, err = time.Parse(time.DateOnly, sinceText); err != nil {
			s.fail(w, r, fmt.Errorf("%w: since %q: want a date, YYYY-MM-DD", errBadRequest, sinceText))
			return
		}
	}
	cps, err := s.Store.OpenRegressions(r.Context(), pkg, since, MaxRegressions+1)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	more := len(cps) > MaxRegressions
	cps = cps[:min(len(cps), MaxRegressions)]
	rows := make([]regressionRow, len(cps))
	for i, c := range cps {
		rows[i].ChangePoint = c
	}
	if err := s.sparks(r.Context(), rows); err != nil {
		s.fail(w, r, err)
		return
	}
	var groups []*regressionGroup
	byKey := map[[3]string]*regressionGroup{}
	for i, c := range cps {
		k := [3]string{c.Pkg, c.Benchmark, c.Unit}
		g := byKey[k]
		if g == nil {
			g = &regressionGroup{Pkg: c.Pkg, Benchmark: c.Benchmark, Unit: c.Unit}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.Points = append(g.Points, &rows[i])
	}
	slices.SortStableFunc(groups, func(a, b *regressionGroup) int { return len(b.Points) - len(a.Points) })
	s.render(w, r, "regressions.html", map[string]any{"Title": "regressions", "Groups": groups, "Count": len(cps), "More": more,
		"Pkg": pkg, "Since": sinceText})
}

package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// chromium finds a headless-capable Chromium, or skips (fails under
// LEDGERBENCH_CI, which .ci/run sets after installing it).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "no chromium is in PATH: the dashboard is not loaded in a browser (apt-get install chromium)")
	return ""
}

// TestDashboardInHeadlessChromium loads the machine page of a planted
// regression and its series page in a real browser and reads the DOM it
// built, and saves screenshots beside the test's temporary files.
func TestDashboardInHeadlessChromium(t *testing.T) {
	browser := chromium(t)
	f := newFixture(t)
	c := f.client()
	for n := 0; n < 16; n++ {
		v := 100.0
		if n >= 12 {
			v = 130
		}
		upload(t, c, fmt.Sprintf("n%d.txt", n), night("m1", "e1", n, v))
	}
	if _, err := f.st.Analyze(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	load := func(path, name string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1366,900",
			"--user-data-dir=" + filepath.Join(dir, "profile-"+name)}
		dom, err := runBrowser(ctx, browser, append(args, "--dump-dom", f.http.URL+path))
		if err != nil {
			t.Fatalf("chromium --dump-dom %s: %v", path, err)
		}
		png := filepath.Join(dir, name+".png")
		if out, err := runBrowser(ctx, browser, append(args, "--screenshot="+png, f.http.URL+path)); err != nil {
			t.Fatalf("chromium --screenshot %s: %v\n%s", path, err, out)
		}
		if st, err := os.Stat(png); err != nil || st.Size() < 5000 {
			t.Errorf("screenshot of %s: %v", path, err)
		}
		return string(dom)
	}
	page := load("/machine/m1", "machine")
	open := page[strings.Index(page, `id="open"`):strings.Index(page, "Other change points")]
	if !strings.Contains(open, "BenchmarkGet/impl=paged-2") || !strings.Contains(open, "30.0 %") {
		t.Fatalf("the browser's machine page does not list the regression:\n%s", open)
	}
	series := load("/series?machine=m1&benchmark=BenchmarkGet%2Fimpl%3Dpaged-2", "series")
	if !regexp.MustCompile(`<div class="chart" id="chart"[^>]*><svg[^>]*>`).MatchString(series) || !strings.Contains(series, "<title>") || !strings.Contains(series, "open regression") {
		t.Fatalf("the series page has no chart:\n%s", series)
	}
	regs := load("/regressions", "regressions")
	if !strings.Contains(regs, `<a href="/regressions">regressions</a>`) || !strings.Contains(regs, `<a href="/machine/m1">m1</a>`) || !strings.Contains(regs, "30.0 %") ||
		!strings.Contains(regs, `<svg class="spark"`) {
		t.Fatalf("the browser's regressions page does not list the regression:\n%s", regs)
	}
	// To look at them: LEDGERBENCH_SCREENSHOTS=DIR keeps a copy.
	if keep := os.Getenv("LEDGERBENCH_SCREENSHOTS"); keep != "" {
		for _, name := range []string{"machine", "series", "regressions"} {
			if b, err := os.ReadFile(filepath.Join(dir, name+".png")); err == nil {
				os.WriteFile(filepath.Join(keep, name+".png"), b, 0o644)
			}
		}
	}
}

// runBrowser runs headless Chromium and returns its standard output; a
// browser killed by a signal (it segfaulted now and then on a loaded
// 2-core VM, whatever the page) is started again, twice at most.
func runBrowser(ctx context.Context, browser string, args []string) ([]byte, error) {
	for try := 1; ; try++ {
		out, err := exec.CommandContext(ctx, browser, args...).Output()
		var ee *exec.ExitError
		crashed := errors.As(err, &ee) && !ee.ProcessState.Exited()
		if !crashed || try == 3 || ctx.Err() != nil {
			return out, err
		}
	}
}

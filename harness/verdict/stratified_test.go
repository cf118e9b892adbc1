package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aclements/go-moremath/stats"
)

// hosts simulates one comparison over hosts: host i's pairs have log
// ratios of mean change[i] and noise sd[i], on a host speed of its own.
func hosts(r *rand.Rand, pairs int, change, sd []float64) []Stratum {
	out := make([]Stratum, len(change))
	for i := range change {
		speed := 100 * math.Exp(0.3*r.NormFloat64()) // hosts differ in speed
		s := Stratum{Name: string(rune('a' + i))}
		for range pairs {
			round := speed * math.Exp(0.05*r.NormFloat64()) // a round's noise, shared by its pair
			s.A = append(s.A, round)
			s.B = append(s.B, round*math.Exp(change[i]+sd[i]*r.NormFloat64()))
		}
		out[i] = s
	}
	return out
}

// TestStratifiedKnownAnswers, 2,000 simulated comparisons each (seeded):
// over three hosts of different noise, no change is called one at about α
// (the 99.9 % binomial interval of 5 % over 1,000), a +5 % change's
// interval covers it at about 1−α, and no host is named as disagreeing
// beyond α; with one host's change +25 % against +5 %, that host is named
// in nearly every comparison and the others almost never; with the hosts'
// own changes +3, +5 and +7 %, the interval of their average is narrower
// than that of the pooled pairs (whose noise counts the hosts'
// differences) and still covers it.
func TestStratifiedKnownAnswers(t *testing.T) {
	const sims, alpha = 2000, 0.05 // half without a change, half +5 %
	r := rand.New(rand.NewPCG(1, 2))
	sd := []float64{0.01, 0.02, 0.08}
	var falseChange, covered, named int
	for i := range sims {
		change := 0.0
		if i%2 == 1 {
			change = math.Log(1.05)
		}
		s := hosts(r, 5, []float64{change, change, change}, sd)
		c, h, err := Stratified(s, alpha, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		if h.Hosts != 3 || c.N != 15 {
			t.Fatalf("%d hosts, %d pairs; want 3, 15", h.Hosts, c.N)
		}
		if len(h.Disagree) > 0 {
			named++
		}
		if change == 0 {
			if c.P < alpha {
				falseChange++
			}
			continue
		}
		if c.Lo <= 1.05 && 1.05 <= c.Hi {
			covered++
		}
	}
	half := sims / 2
	t.Logf("no change: changed in %d of %d; +5 %%: covered in %d of %d; a host named in %d of %d", falseChange, half, covered, half, named, sims)
	if lo, hi := binomialBounds(half, alpha); float64(falseChange) < lo || float64(falseChange) > hi {
		t.Errorf("no change called changed in %d of %d, want within [%.0f, %.0f]", falseChange, half, lo, hi)
	}
	if lo, _ := binomialBounds(half, 1-alpha); float64(covered) < lo {
		t.Errorf("the +5 %% change covered by %d of %d intervals, want at least %.0f", covered, half, lo)
	}
	if _, hi := binomialBounds(sims, alpha); float64(named) > hi {
		t.Errorf("a host named as disagreeing in %d of %d comparisons of one change, want at most %.0f", named, sims, hi)
	}
	// One host's change is +25 %, the others' +5 %.
	var right, wrong int
	for range half {
		s := hosts(r, 5, []float64{math.Log(1.05), math.Log(1.25), math.Log(1.05)}, []float64{0.02, 0.02, 0.02})
		_, h, _ := Stratified(s, alpha, 0.8)
		for _, d := range h.Disagree {
			if d.Name == "b" {
				right++
			} else {
				wrong++
			}
		}
	}
	t.Logf("one host +25 %%: named %d of %d, the others %d times", right, half, wrong)
	if right < half*95/100 || wrong > half*5/100 {
		t.Errorf("host b (+25 %%) named in %d of %d, the others %d times", right, half, wrong)
	}
	var narrower, covers int
	for range half {
		s := hosts(r, 5, []float64{math.Log(1.03), math.Log(1.05), math.Log(1.07)}, []float64{0.01, 0.01, 0.01})
		c, _, _ := Stratified(s, alpha, 0.8)
		var a, b []float64
		for _, st := range s {
			a, b = append(a, st.A...), append(b, st.B...)
		}
		d, _ := logRatios(a, b)
		x := stats.Sample{Xs: d}
		pooled := Change{Ratio: math.Exp(x.Mean())}
		pooled.finish(x.Mean(), x.StdDev()/math.Sqrt(float64(len(d))), float64(len(d)-1), alpha, 0.8)
		if c.Hi/c.Lo < pooled.Hi/pooled.Lo {
			narrower++
		}
		if avg := math.Exp((math.Log(1.03) + math.Log(1.05) + math.Log(1.07)) / 3); c.Lo <= avg && avg <= c.Hi {
			covers++
		}
	}
	t.Logf("hosts +3, +5, +7 %%: narrower than pooled in %d of %d, covered in %d", narrower, half, covers)
	if lo, _ := binomialBounds(half, 1-alpha); narrower < half*9/10 || float64(covers) < lo {
		t.Errorf("hosts of +3, +5, +7 %%: narrower than the pooled interval in %d of %d, the average covered in %d", narrower, half, covers)
	}
}

// binomialBounds is the 99.9 % interval of a Binomial(n, p) count
// (normal approximation).
func binomialBounds(n int, p float64) (lo, hi float64) {
	m, s := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
	return m - 3.29*s, m + 3.29*s
}

// TestStratifiedEdges: a host of one pair is skipped and named; exact
// counts on every host are exact; a host whose pairs do not vary beside a
// noisy one counts its pairs; the message of a disagreeing host.
func TestStratifiedEdges(t *testing.T) {
	one := []Stratum{{Name: "x", A: []float64{1, 1, 1}, B: []float64{1.1, 1.2, 1.15}}, {Name: "lone", A: []float64{1}, B: []float64{2}}}
	c, h, err := Stratified(one, 0.05, 0.8)
	if err != nil || h.Hosts != 1 || len(h.Skipped) != 1 || h.Skipped[0] != "lone" || c.N != 3 {
		t.Errorf("one pair on a host: %+v %+v %v", c, h, err)
	}
	exact := []Stratum{{Name: "x", A: []float64{10, 10}, B: []float64{12, 12}}, {Name: "y", A: []float64{10, 10, 10}, B: []float64{12, 12, 12}}}
	c, _, _ = Stratified(exact, 0.05, 0.8)
	if math.Abs(c.Ratio-1.2) > 1e-12 || c.Lo != c.Ratio || c.Hi != c.Ratio || c.P != 0 {
		t.Errorf("exact counts: %+v", c)
	}
	mixed := []Stratum{{Name: "flat", A: []float64{10, 10}, B: []float64{12, 12}}, {Name: "x", A: []float64{1, 1, 1}, B: []float64{1.1, 1.2, 1.15}}}
	if c, h, _ := Stratified(mixed, 0.05, 0.8); h.Hosts != 2 || len(h.Skipped) != 0 || !(c.Hi > c.Lo) {
		t.Errorf("a flat host beside a noisy one counts its pairs, and the interval is the noisy one's: %+v %+v", c, h)
	}
	if _, _, err := Stratified([]Stratum{{Name: "bad", A: []float64{1, 0}, B: []float64{1, 1}}}, 0.05, 0.8); err == nil || !strings.HasPrefix(err.Error(), "bad: ") {
		t.Errorf("a zero value: %v", err)
	}
	hc := HostChange{Name: "agent-3", Ratio: 1.25, Lo: 1.2, Hi: 1.3, Others: 1.05, P: 0.0001}
	if got := hc.String(); got != "agent-3: +25.0 % [+20.0, +30.0] against +5.0 % of the other hosts (p=0.0001)" {
		t.Errorf("%q", got)
	}
}

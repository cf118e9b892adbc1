package harness

// NoopBenchmark declares a family's no-op benchmark: an empty op, whose
// ns/op is the harness's own cost per op in that run.
func NoopBenchmark(family, name string, suites ...string) *Benchmark {
	return &Benchmark{
		Family: family, Name: name, Suites: suites, Doc: "an empty op: the harness's cost",
		Setup: func(t *Trial) error {
			t.Run(func(*Worker) (func(), error) { return func() {}, nil })
			return nil
		},
	}
}

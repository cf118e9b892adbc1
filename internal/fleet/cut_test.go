package fleet

import (
	"fmt"
	"testing"
	"time"
)

// TestCutKeepsACasesRoundsTogether: a job holds all the rounds of its
// cases when they fit; rounds that do not fit are cut into chunks of at
// least MinJobRounds; a job holds as many cases as fit beside that.
func TestCutKeepsACasesRoundsTogether(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		rounds, cases int
		one, job      time.Duration
		want          string
		per           int
	}{
		// ab's defaults: 5 rounds of 3 s warmup and 5 s measured a side.
		{5, 2000, 16500 * time.Millisecond, 3 * time.Minute, "[{1 5}]", 2},
		{5, 1, 16500 * time.Millisecond, 3 * time.Minute, "[{1 5}]", 1},
		// 9 cases fit a job: 4 jobs, of 8, 8, 8 and 6 rather than 9, 9, 9, 3.
		{10, 30, 2 * s, 3 * time.Minute, "[{1 10}]", 8},
		// 600 s of rounds in 180 s jobs: 4 wanted, 3 allowed (10/3).
		{10, 4, time.Minute, 3 * time.Minute, "[{1 4} {5 3} {8 3}]", 1},
		// 4 rounds cannot make two chunks of 3.
		{4, 2, s, 1500 * time.Millisecond, "[{1 4}]", 1},
		{6, 2, s, 1500 * time.Millisecond, "[{1 3} {4 3}]", 1},
		{0, 3, s, time.Minute, "[{1 1}]", 3},
	} {
		chunks, per := cut(tc.rounds, tc.cases, tc.one, tc.job)
		if got := fmt.Sprint(chunks); got != tc.want || per != tc.per {
			t.Errorf("cut(%d rounds, %d cases, %s, %s) = %s, %d a job; want %s, %d", tc.rounds, tc.cases, tc.one, tc.job, got, per, tc.want, tc.per)
		}
		total := 0
		for _, c := range chunks {
			if c.first != total+1 || (len(chunks) > 1 && c.count < MinJobRounds) {
				t.Errorf("cut(%d, %d): chunk %v after %d rounds", tc.rounds, tc.cases, c, total)
			}
			total += c.count
		}
		if total != max(tc.rounds, 1) {
			t.Errorf("cut(%d, %d): %d rounds planned", tc.rounds, tc.cases, total)
		}
	}
}

// TestPackKeepsAGroupOnOneMachine: a comparison group's cases (an
// implementation axis's points) go to one job, never split; groups fill
// a job up to per cases, and one larger than per is a job alone.
func TestPackKeepsAGroupOnOneMachine(t *testing.T) {
	for _, tc := range []struct {
		groups [][]int
		per    int
		want   string
	}{
		{[][]int{{0}, {1}, {2}}, 2, "[[0 1] [2]]"},
		{[][]int{{0, 2}, {1, 3}}, 3, "[[0 2] [1 3]]"},
		{[][]int{{0, 1, 2}, {3}}, 2, "[[0 1 2] [3]]"},
		{[][]int{{0}, {1, 2, 3}, {4}}, 2, "[[0] [1 2 3] [4]]"},
		{[][]int{{0, 1}, {2, 3}}, 4, "[[0 1 2 3]]"},
		{nil, 3, "[]"},
	} {
		if got := fmt.Sprint(pack(tc.groups, tc.per)); got != tc.want {
			t.Errorf("pack(%v, %d) = %s, want %s", tc.groups, tc.per, got, tc.want)
		}
	}
}

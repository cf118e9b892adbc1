// Package bisect finds the commit that made a measured change, by binary
// search over a range of commits whose ends are known: the good end
// (excluded from the range) does not have the change, the bad end (the
// range's last commit) has it.
//
// A [Prober] measures one commit of the range and says where it stands
// between the ends, as a [Position]: the share of the good→bad change
// that the commit already carries, with its interval (0 is the good end,
// 1 the bad end). [Classify] turns a position into a three-way answer,
// the two one-sided tests against the midpoint: [Bad] when the whole
// interval lies above ½ (the commit has the change), [Good] when it lies
// below ½, [Unknown] otherwise; the prober spends its own budget on more
// rounds before it answers Unknown. A commit that cannot be measured (it
// does not build, its benchmark does not run) is [Skipped].
//
// [Search] probes the commit nearest the middle of the commits still in
// doubt, moves the good or the bad end on Good or Bad, and passes over
// a commit that stayed Unknown or was Skipped for the untried commit
// nearest the middle; it never guesses what such a commit is. It ends
// when no untried commit lies between the ends: with the culprit when
// the ends are adjacent, otherwise with the suspects (the commits after
// the good end up to the bad end), among which the untried-because-
// unknown or skipped commits hide the change. With the culprit's
// neighbours decided, a search of N commits probes ⌈log₂ N⌉ commits when
// every probe decides.
//
// Search stops at the first error of the prober (an interrupt): the
// result holds the steps made so far and the error.
//
// [Run] is the whole bisection as a library, the one `benchctl bisect`
// calls: it resolves the range, prepares the host (a [session.Session]),
// confirms the ends by an A/B of good against bad (internal/ab's builders,
// decided by compare.ABOptions) and picks the row to follow, measures the
// ends again when their interval is too wide for the steps (a
// contradicting second measurement ends the search as ambiguous), probes
// each commit by an A/B against the bad end, and claims a culprit only
// when its own A/B against its parent is changed the same way. Every A/B
// is kept under Out/steps; the [Report] is written to Out as bisect.md and
// bisect.json and returned. [Within] does the same on a session the caller
// prepared (nightly's). Their errors are session.UsageError (bad options,
// named as the option fields) and session.FailedError (no culprit, a
// failed fork, an interrupt), returned with the report written so far.
package bisect

package explain

import "math"

// ReportJSON is a Report as explain.json holds it: a share that is not
// defined is absent rather than NaN, which JSON cannot hold.
type ReportJSON struct {
	Pairs     int            `json:"pairs"`
	Alpha     float64        `json:"alpha"`
	Base      float64        `json:"base_ns_per_op"`
	Exp       float64        `json:"experiment_ns_per_op"`
	Total     Delta          `json:"change"`
	Whole     *float64       `json:"row_change_ns_per_op,omitempty"`
	Functions []FunctionJSON `json:"functions"`
	Notes     []string       `json:"notes,omitempty"`
}

// FunctionJSON is a Function in explain.json.
type FunctionJSON struct {
	Name  string   `json:"name"`
	Base  float64  `json:"base_flat_ns_per_op"`
	Exp   float64  `json:"experiment_flat_ns_per_op"`
	Flat  Delta    `json:"flat_change"`
	Cum   Delta    `json:"cum_change"`
	P     float64  `json:"p"`
	Q     float64  `json:"q"`
	CumQ  float64  `json:"cum_q"`
	Named bool     `json:"named"`
	Share *float64 `json:"share,omitempty"`
}

// JSON is r in explain.json's form.
func (r *Report) JSON() ReportJSON {
	out := ReportJSON{Pairs: r.Pairs, Alpha: r.Alpha, Base: r.Base, Exp: r.Exp, Total: r.Total, Whole: defined(r.Whole), Notes: r.Notes}
	for _, f := range r.Functions {
		out.Functions = append(out.Functions, FunctionJSON{Name: f.Name, Base: f.Base, Exp: f.Exp, Flat: f.Flat, Cum: f.Cum,
			P: f.P, Q: f.Q, CumQ: f.CumQ, Named: f.Named, Share: defined(f.Share)})
	}
	return out
}

func defined(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

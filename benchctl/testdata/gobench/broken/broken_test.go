package broken

import "testing"

func BenchmarkBroken(b *testing.B) {
	undefinedFunction()
}

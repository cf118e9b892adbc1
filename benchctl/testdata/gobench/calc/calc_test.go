package calc

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
)

var sink uint64

func BenchmarkSumN(b *testing.B) {
	buf := make([]byte, 64)
	for i := 0; i < b.N; i++ {
		sink += Sum(buf)
	}
}

func BenchmarkSumLoop(b *testing.B) {
	buf := make([]byte, 64)
	for b.Loop() {
		sink += Sum(buf)
	}
}

func BenchmarkParallel(b *testing.B) {
	var n atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n.Add(1)
		}
	})
}

func BenchmarkMetric(b *testing.B) {
	buf := make([]byte, 1024)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		sink += Sum(buf)
	}
	b.ReportMetric(3, "widgets/op")
}

func BenchmarkSizes(b *testing.B) {
	for _, size := range []int{8, 512} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			buf := make([]byte, size)
			b.Run("alloc", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					buf = make([]byte, size)
				}
			})
			b.Run("sum", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					sink += Sum(buf)
				}
			})
		})
	}
}

// BenchmarkTestdata reads testdata through a relative path: it works only
// when the binary runs in the package's directory, as go test runs it.
func BenchmarkTestdata(b *testing.B) {
	data, err := os.ReadFile("testdata/input.txt")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		sink += Sum(data)
	}
}

func BenchmarkSkip(b *testing.B) {
	b.Skip("fixture: skips itself")
}

// BenchmarkPrint prints to stdout while it runs, between go test's own
// output lines.
func BenchmarkPrint(b *testing.B) {
	fmt.Printf("BenchmarkPrint is printing")
	for i := 0; i < b.N; i++ {
		sink += uint64(i)
	}
	fmt.Println(" garbage 12 ns/op")
	fmt.Println("BenchmarkNotAResult 12 lines ns/op")
}

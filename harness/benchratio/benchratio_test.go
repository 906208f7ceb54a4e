package benchratio

import (
	"slices"
	"testing"
)

// TestOrder: every round is a permutation of the variants, and the order
// changes between rounds: no variant always follows the same one.
func TestOrder(t *testing.T) {
	const n, rounds = 5, 200
	next := Order(n)
	predecessors := make([]map[int]bool, n)
	for i := range predecessors {
		predecessors[i] = map[int]bool{}
	}
	for range rounds {
		order := slices.Clone(next())
		if got := slices.Sorted(slices.Values(order)); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
			t.Fatalf("round order %v is not a permutation of 0..%d", order, n-1)
		}
		for k := 1; k < n; k++ {
			predecessors[order[k]][order[k-1]] = true
		}
	}
	for v, p := range predecessors {
		if len(p) < n-1 {
			t.Errorf("variant %d followed only %v in %d rounds, want every other variant", v, p, rounds)
		}
	}
}

package canonjson

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

func TestAlreadyCanonical(t *testing.T) {
	yes := []string{
		`{}`, `[]`, `""`, `0`, `-1`, `999999999999999`, `-999999999999999`, `true`, `false`, `null`,
		`{"city":"Paris"}`, `{"a":[1,{"b":null}],"b":{}}`, "[\"\u007f€😀 \u2028\"]",
		`{"A":1,"B":2,"a":3}`, `{"":0,"a":1}`, `{"é":1,"ö":2,"€":3}`,
	}
	no := []string{
		` {}`, `{} `, `{ }`, `[1, 2]`, `{"a" :1}`, // whitespace
		`{"b":1,"a":2}`, `{"a":1,"a":2}`, // order, duplicates
		`"\n"`, `"a\"b"`, `"\u0041"`, `"\/"`, // escapes, canonical or not
		`1.0`, `1.5`, `1e2`, `1E2`, `-0`, `01`, `1234567890123456`, // numbers left to the transform
		`{"\ufb33":1}`, "{\"\ufb33\":1}", "{\"😀\":1}", // keys where UTF-8 and UTF-16 orders may differ
		"\"\xff\"", "\"a\x01\"", `[1,]`, `{"a":1,}`, `tru`, `[`, `{"a"}`, `"abc`, `-`,
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	}
	for _, s := range yes {
		if !alreadyCanonical([]byte(s)) {
			t.Errorf("%s: not taken as canonical", s)
		}
		if out, err := jcs.Transform([]byte(s)); err != nil || string(out) != s {
			t.Errorf("%s: the transform gives %s, %v", s, out, err)
		}
	}
	for _, s := range no {
		if alreadyCanonical([]byte(s)) {
			t.Errorf("%s: taken as canonical", s)
		}
	}
}

// TestAlreadyCanonicalRandom: for random documents, the fast path agrees
// with the transform whenever it says yes, and says yes for the transform's
// own output of documents in its subset.
func TestAlreadyCanonicalRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	taken := 0
	for i := 0; i < 20000; i++ {
		doc := []byte(randomDocument(r, 0))
		if err := Validate(doc, MaxHostBytes); err != nil {
			continue // a duplicate key
		}
		canon, err := jcs.Transform(doc)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if alreadyCanonical(doc) {
			taken++
			if string(canon) != string(doc) {
				t.Fatalf("%s taken as canonical; the transform gives %s", doc, canon)
			}
		}
		got, err := Canonical(doc)
		if err != nil || string(got) != string(canon) {
			t.Fatalf("%s: Canonical gives %s, %v; the transform %s", doc, got, err, canon)
		}
	}
	if taken < 1000 {
		t.Fatalf("only %d of the documents took the fast path", taken)
	}
}

func randomDocument(r *rand.Rand, depth int) string {
	pick := r.IntN(10)
	if depth > 4 {
		pick = r.IntN(6)
	}
	switch pick {
	case 0:
		return strconv.Itoa(r.IntN(2000) - 1000)
	case 1:
		return []string{"0", "-0", "1.5", "1e3", "12345678901234567", "999999999999999", "0.1", "-7"}[r.IntN(8)]
	case 2, 3:
		return `"` + randomText(r) + `"`
	case 4:
		return []string{"true", "false", "null"}[r.IntN(3)]
	case 5:
		return `"\u00e9\n"`
	case 6, 7:
		n := r.IntN(4)
		members := make([]string, n)
		for i := range members {
			members[i] = `"` + randomText(r) + `":` + randomDocument(r, depth+1)
		}
		if r.IntN(2) == 0 {
			sortMembers(members)
		}
		return "{" + strings.Join(members, ",") + "}"
	}
	n := r.IntN(4)
	items := make([]string, n)
	for i := range items {
		items[i] = randomDocument(r, depth+1)
	}
	sep := ","
	if r.IntN(8) == 0 {
		sep = ", "
	}
	return "[" + strings.Join(items, sep) + "]"
}

func randomText(r *rand.Rand) string {
	parts := []string{"a", "b", "B", "z", "é", "€", "\ufb33", "😀", `\"`, `\\`, `\u0041`, " ", "\u2028", "1", ""}
	var b strings.Builder
	for n := r.IntN(3); n >= 0; n-- {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// sortMembers orders members by their raw key bytes, which is the
// canonical order for the keys the fast path accepts.
func sortMembers(members []string) {
	key := func(m string) string { k, _, _ := strings.Cut(m[1:], `":`); return k }
	for i := 1; i < len(members); i++ {
		for j := i; j > 0 && key(members[j]) < key(members[j-1]); j-- {
			members[j], members[j-1] = members[j-1], members[j]
		}
	}
}

// FuzzAlreadyCanonical: a document the fast path takes as canonical is
// exactly what the transform writes for it.
func FuzzAlreadyCanonical(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":null}],"b":{}}`, `{"city":"Paris"}`, `["é€",-5,true]`, `{"b":1,"a":2}`, `1.0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !alreadyCanonical(doc) {
			return
		}
		if err := Validate(doc, MaxHostBytes); err != nil {
			t.Fatalf("%q taken as canonical, but Validate refuses it: %v", doc, err)
		}
		out, err := jcs.Transform(doc)
		if err != nil || string(out) != string(doc) {
			t.Fatalf("%q taken as canonical; the transform gives %q, %v", doc, out, err)
		}
	})
}

// A canonical document costs CanonicalValidated nothing (raw itself comes
// back), while Canonical's result never shares raw's memory; a document
// that is not canonical is transformed by both.
func TestCanonicalFastPathMemory(t *testing.T) {
	raw := []byte(`{"city":"Paris","n":[1,2]}`)
	got, err := CanonicalValidated(raw)
	if err != nil || &got[0] != &raw[0] {
		t.Fatalf("CanonicalValidated of a canonical document: %q, %v, not raw itself", got, err)
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = CanonicalValidated(raw) }); allocs != 0 {
		t.Errorf("CanonicalValidated of a canonical document allocates %v times", allocs)
	}
	copied, err := Canonical(raw)
	if err != nil || string(copied) != string(raw) || &copied[0] == &raw[0] {
		t.Fatalf("Canonical of a canonical document: %q, %v, shared %v", copied, err, &copied[0] == &raw[0])
	}
	loose := []byte(`{"n":[1,2], "city":"Paris"}`)
	for _, f := range []func([]byte) ([]byte, error){Canonical, CanonicalValidated} {
		if out, err := f(loose); err != nil || string(out) != string(raw) {
			t.Errorf("%q gives %q, %v", loose, out, err)
		}
	}
}

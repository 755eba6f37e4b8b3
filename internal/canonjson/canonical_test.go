package canonjson

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strconv"
	"testing"
	"unicode/utf8"
)

// RFC 8785 section 3.2.2 and 3.2.3 examples.
func TestCanonicalRFC8785Examples(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{
			name: "3.2.2 values",
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			name: "3.2.3 sorting by UTF-16 code units",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{name: "nested and whitespace", in: ` { "b" : [ 1 , { "d":1, "c":2 } ], "a" : {} } `, want: `{"a":{},"b":[1,{"c":2,"d":1}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonical([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// RFC 8785 appendix B: IEEE-754 bit patterns and their canonical text.
func TestCanonicalRFC8785Numbers(t *testing.T) {
	cases := []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	}
	for _, tc := range cases {
		in := strconv.FormatFloat(math.Float64frombits(tc.bits), 'g', -1, 64)
		got, err := Canonical([]byte("[" + in + "]"))
		if err != nil {
			t.Fatalf("%#x (%s): %v", tc.bits, in, err)
		}
		if string(got) != "["+tc.want+"]" {
			t.Errorf("%#x (%s): got %s want [%s]", tc.bits, in, got, tc.want)
		}
	}
}

func TestMarshalIsCanonical(t *testing.T) {
	got, err := Marshal(map[string]any{"z": "<&>", "a": []int{3, 1}, "m": 1.5})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":[3,1],"m":1.5,"z":"<&>"}`; string(got) != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

// The digest is recomputed here by hand, not through Digest.
func TestDigestDomainSeparated(t *testing.T) {
	body := []byte(`{"a":1}`)
	sum := sha256.Sum256(append([]byte(DomainPlan+"\x00"), body...))
	want := "sha256:" + hex.EncodeToString(sum[:])
	if got := Digest(DomainPlan, body); got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	if Digest(DomainGrant, body) == Digest(DomainPlan, body) {
		t.Fatal("digests in different domains collide")
	}
	if !IsDigest(want) || IsDigest("sha256:XYZ") || IsDigest(want[:70]) || IsDigest("md5:"+want[7:]) {
		t.Fatal("IsDigest misjudges")
	}
}

func TestAppendStringMatchesCanonical(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "ctl \x00\x01\x1f\b\t\n\f\r", "é€😀", "\u2028\u2029", "<&>/"} {
		want, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a\"b\\c\x01é")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		want, err := Marshal(s)
		if err != nil {
			return
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
	})
}

package graph

import (
	"bytes"
	"math"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// FuzzDirectStringMatchesGqlgen: the direct executor writes strings byte
// for byte as gqlgen's MarshalString does, whatever they hold.
func FuzzDirectStringMatchesGqlgen(f *testing.F) {
	for _, s := range []string{"", "plain ascii id 0123456789abcdef", "quote\" backslash\\ tab\t nl\n cr\r", "\x00\x01\x1f\x7f", "é中文🙂", "\xff\xfe invalid utf-8", "<>&\u2028\u2029", "exactly8", "sixteen-bytes-ok", "0123456\"89abcdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		graphql.MarshalString(s).MarshalGQL(&want)
		var o directOut
		o.str(s)
		if !bytes.Equal(o.b.Bytes(), want.Bytes()) {
			t.Fatalf("%q: direct %q, gqlgen %q", s, o.b.Bytes(), want.Bytes())
		}
	})
}

// TestDirectScalarsMatchGqlgen: the writers the generator uses for
// gqlgen's built-in scalars write what gqlgen's marshalers write.
func TestDirectScalarsMatchGqlgen(t *testing.T) {
	check := func(name string, direct func(o *directOut), want graphql.Marshaler) {
		t.Helper()
		var o directOut
		direct(&o)
		var w bytes.Buffer
		want.MarshalGQL(&w)
		if !bytes.Equal(o.b.Bytes(), w.Bytes()) {
			t.Fatalf("%s: direct %q, gqlgen %q", name, o.b.Bytes(), w.Bytes())
		}
	}
	for _, v := range []int64{0, 1, -1, 42, 1 << 31, -(1 << 31), 1<<63 - 1, -1 << 63} {
		check("Int", func(o *directOut) { o.int(v) }, graphql.MarshalInt64(v))
		check("IntID", func(o *directOut) { o.intQuoted(v) }, graphql.MarshalIntID(int(v)))
	}
	for _, v := range []bool{true, false} {
		check("Boolean", func(o *directOut) { o.bool(v) }, graphql.MarshalBoolean(v))
	}
	for _, v := range []float64{0, 1, -1.5, 1e21, 1e-7, 123456789.125, 3.141592653589793} {
		var want bytes.Buffer
		if err := graphql.MarshalFloatContext(v).MarshalGQLContext(t.Context(), &want); err != nil {
			t.Fatal(err)
		}
		var o directOut
		if err := o.float(v); err != nil || !bytes.Equal(o.b.Bytes(), want.Bytes()) {
			t.Fatalf("Float %v: direct %q (%v), gqlgen %q", v, o.b.Bytes(), err, want.Bytes())
		}
	}
	var o directOut
	if err := o.float(math.Inf(1)); err == nil {
		t.Fatal("an infinite Float was written")
	}
}

// TestDirectRollbackSetsHolesAside: rolling a buffer back drops the holes
// made since the mark from the output, while the goroutines filling them
// may still write: their buffers are set aside until every goroutine is
// done, then returned to the pool (under -race, a buffer reused while its
// goroutine writes would be reported).
func TestDirectRollbackSetsHolesAside(t *testing.T) {
	x := &directState{}
	root := getFxBuffer()
	w := &directWalk{o: root}
	root.b.WriteString(`{"kept":`)
	kept := getFxBuffer()
	root.holes = append(root.holes, directHole{at: root.b.Len(), out: kept})
	root.b.WriteString(`,"dropped":`)
	m := root.mark()
	root.b.WriteString(`{"a":`)
	dropped := getFxBuffer()
	root.holes = append(root.holes, directHole{at: root.b.Len(), out: dropped})
	root.b.WriteString(`}`)

	start := make(chan struct{})
	for _, u := range []*directOut{kept, dropped} {
		x.wg.Add(1)
		go func() {
			defer x.wg.Done()
			<-start
			u.b.WriteString(`"value"`)
		}()
	}
	x.rollback(w.o, m)
	w.o.null()
	w.o.b.WriteByte('}')
	close(start)
	x.wg.Wait()
	if len(x.discarded) != 1 || x.discarded[0].out != dropped {
		t.Fatalf("set aside %v, want the dropped hole's buffer", x.discarded)
	}
	x.releaseDiscarded()
	data := &directData{root: root}
	if got, want := string(data.bytes()), `{"kept":"value","dropped":null}`; got != want {
		t.Fatalf("data %s, want %s", got, want)
	}
}

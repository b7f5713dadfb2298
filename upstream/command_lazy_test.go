package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// decodeWhole decodes a page of transactions as the client did before
// commands were decoded as read: every command in full, by
// Command.UnmarshalJSON, while the page is decoded (the reference of the
// lazy path).
func decodeWhole(body []byte) ([]Transaction, error) {
	var page transactionsBody
	if err := decodeBody(body, &page); err != nil || page.Transactions == nil {
		return nil, err
	}
	return *page.Transactions, nil
}

// decodeLazy decodes a page of transactions as the client does.
func decodeLazy(body []byte) ([]Transaction, error) {
	var page pageBody
	if err := decodeBody(body, &page); err != nil {
		return nil, err
	}
	return page.rows, nil
}

// whole is tx with its command decoded whole in Command, as the reference
// decodes it.
func whole(tb testing.TB, tx Transaction) Transaction {
	tb.Helper()
	cmd, err := tx.DecodedCommand()
	if err != nil {
		tb.Fatalf("transaction %s: command: %v", tx.Hash, err)
	}
	tx.Command, tx.LazyCommand = cmd, TxCommand{}
	return tx
}

// checkLazyMatchesWhole fails unless body, decoded lazily and then every
// command read (PrepareCommands with EveryCommand), yields what
// decodeWhole yields: the same transactions, or the same error, which the
// lazy path reports as a *DecodeError of the explorer's transactions
// endpoint around the reference's error.
func checkLazyMatchesWhole(t *testing.T, name string, body []byte) {
	t.Helper()
	want, wantErr := decodeWhole(body)
	got, err := decodeLazy(body)
	if err == nil && got != nil {
		got, err = PrepareCommands(got, EveryCommand, EndpointTransactions)
		var de *DecodeError
		if err != nil && (!errors.As(err, &de) || de.Service != ServiceExplorer || de.Endpoint != EndpointTransactions) {
			t.Fatalf("%s: PrepareCommands: %v, want a *DecodeError of the explorer's transactions", name, err)
		}
		if de != nil {
			err = de.Err
		}
	}
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("%s: lazy error %v, whole decode's %v", name, err, wantErr)
	case err != nil:
		if err.Error() != wantErr.Error() || reflect.TypeOf(err) != reflect.TypeOf(wantErr) {
			t.Fatalf("%s: lazy error %T %q, whole decode's %T %q", name, err, err, wantErr, wantErr)
		}
		var te, wantTE *json.UnmarshalTypeError
		if errors.As(err, &te) && errors.As(wantErr, &wantTE) && (te.Field != wantTE.Field || te.Struct != wantTE.Struct || te.Value != wantTE.Value || te.Type != wantTE.Type) {
			t.Fatalf("%s: lazy type error %+v, whole decode's %+v", name, te, wantTE)
		}
	default:
		if len(got) != len(want) {
			t.Fatalf("%s: %d transactions, whole decode's %d", name, len(got), len(want))
		}
		for i := range got {
			if !sameDecoded(whole(t, got[i]), want[i]) {
				t.Fatalf("%s: transaction %d: %#v, whole decode's %#v", name, i, whole(t, got[i]), want[i])
			}
			gotJSON, gotErr := json.Marshal(got[i])
			wantJSON, wantErr := json.Marshal(want[i])
			if string(gotJSON) != string(wantJSON) || gotErr != nil || wantErr != nil {
				t.Fatalf("%s: transaction %d marshals to %s (%v), whole decode's to %s (%v)", name, i, gotJSON, gotErr, wantJSON, wantErr)
			}
			wantCmd := want[i].Command
			member, err := got[i].CommandMember()
			if err != nil || !sameDecoded(member, wantCmd.Kind) {
				t.Fatalf("%s: transaction %d: CommandMember %#v, %v, want %#v", name, i, member, err, wantCmd.Kind)
			}
			if c := got[i].LazyCommand; c.cell != nil && c.cell.raw != nil {
				// The head of a command decoded in full is taken from it:
				// the scan of its JSON finds the same.
				derived, scanned := c.head(), (&commandCell{raw: c.cell.raw}).scanned()
				if derived.name != scanned.name || derived.known != scanned.known || derived.nonce != scanned.nonce ||
					derived.blockHeight != scanned.blockHeight || (derived.err == nil) != (scanned.err == nil) {
					t.Fatalf("%s: transaction %d: head %+v after the full decode, %+v scanned", name, i, derived, scanned)
				}
			}
			nonce, nErr := got[i].CommandNonce()
			height, hErr := got[i].CommandBlockHeight()
			if nonce != wantCmd.Nonce || height != wantCmd.BlockHeight || nErr != nil || hErr != nil {
				t.Fatalf("%s: transaction %d: nonce %d (%v), block height %d (%v), want %d, %d", name, i, nonce, nErr, height, hErr, wantCmd.Nonce, wantCmd.BlockHeight)
			}
		}
	}
}

// pageOf is a page of one transaction whose command is command.
func pageOf(command []byte) []byte {
	return []byte(`{"transactions":[{"block":"7","index":1,"hash":"AB","command":` + string(command) + `,"code":0}]}`)
}

// fuzzCorpusValues returns the byte and string values of every file of
// the package's fuzz corpora (testdata/fuzz).
func fuzzCorpusValues(tb testing.TB) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "*"))
	if err != nil {
		tb.Fatal(err)
	}
	value := regexp.MustCompile(`^(?:\[\]byte|string)\((".*")\)$`)
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if m := value.FindStringSubmatch(line); m != nil {
				s, err := strconv.Unquote(m[1])
				if err != nil {
					tb.Fatalf("%s: %v", f, err)
				}
				out = append(out, []byte(s))
			}
		}
	}
	if len(out) == 0 {
		tb.Fatal("no fuzz corpus values")
	}
	return out
}

// lazyCommandSeeds are commands the lazy path must treat as the whole
// decode does: good ones in and out of the wire's order, and broken ones
// of every kind of failure.
var lazyCommandSeeds = []string{
	`null`, `{}`, `[]`, `"x"`, `7`,
	`{"nonce":"1","blockHeight":"2","orderSubmission":{"marketId":"m","price":"1","size":"3","side":"SIDE_BUY"}}`,
	`{"orderSubmission":{"marketId":"m"},"nonce":"1"}`,
	`{"nonce":"1","announceNode":{"id":"x"},"applyReferralCode":{"id":"y"}}`,
	`{"nonce":"1","submitAmm":{"a":[1,{"b":"}"}]}}`,
	`{"nonce":"1","orderSubmission":null}`,
	`{"n\u006fnce":"1","joinTeam":{"id":"t"}}`,
	`{"nonce":"x","joinTeam":{"id":"t"}}`,
	`{"nonce":1,"joinTeam":{"id":"t"}}`,
	`{"joinTeam":{"id":5},"nonce":"1"}`,
	`{"nonce":"1","orderSubmission":7}`,
	`{"nonce":"1","orderSubmission":{"size":"-1"}}`,
	`{"nonce":"1","batchMarketInstructions":{"submissions":[{"marketId":"m","side":"SIDE_BUY"}],"cancellations":{}}}`,
	`{"nonce":"1","blockHeight":"2","batchProposalSubmission":{"terms":{"changes":[{"newMarket":{"changes":7}}]}}}`,
	`{"nonce":"1","blockHeight":"18446744073709551616","voteSubmission":{}}`,
	`{"nonce":"1","orderSubmission":{"marketId":"m"}`, `{"nonce":tru}`, `{"x":1,}`,
}

// TestLazyDecodeMatchesWholeDecode is the differential test of the lazy
// path against the whole decode: every transaction of the sample
// service's default dataset (each command kind, the notable edge cases),
// the fixtures, commands made of every value of the fuzz corpora, and
// broken commands, give the same transactions or the same errors.
func TestLazyDecodeMatchesWholeDecode(t *testing.T) {
	for _, s := range loadSampleBodies(t) {
		if strings.HasPrefix(s.name, "transactions/") {
			checkLazyMatchesWhole(t, s.name, s.body)
		}
	}
	for _, name := range []string{"transactions_commands.json", "transactions_edge_cases.json", "transactions_proposals.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		checkLazyMatchesWhole(t, name, b)
	}
	for i, v := range fuzzCorpusValues(t) {
		checkLazyMatchesWhole(t, fmt.Sprintf("corpus value %d as the command", i), pageOf(v))
		checkLazyMatchesWhole(t, fmt.Sprintf("corpus value %d as the member", i), pageOf([]byte(`{"nonce":"1","orderSubmission":`+string(v)+`}`)))
	}
	for _, s := range lazyCommandSeeds {
		checkLazyMatchesWhole(t, s, pageOf([]byte(s)))
	}
	for _, g := range garbageBodies {
		checkLazyMatchesWhole(t, g.name, []byte(g.body))
	}
	// The first failing command is the one reported, as the whole decode
	// reports the first error in the body.
	two := `{"transactions":[{"block":"7","index":1,"command":{"joinTeam":{"id":5}}},{"block":"7","index":0,"command":{"nonce":"x","joinTeam":{}}}]}`
	checkLazyMatchesWhole(t, "two broken commands", []byte(two))
}

// FuzzLazyCommand: whatever a command's bytes, the lazy path and the whole
// decode agree.
func FuzzLazyCommand(f *testing.F) {
	for _, s := range lazyCommandSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, command []byte) {
		checkLazyMatchesWhole(t, "fuzz", pageOf(command))
	})
}

// lazyPage decodes a page of the sample dataset's first 200 transactions,
// as the client does.
func lazyPage(t *testing.T) []Transaction {
	t.Helper()
	for _, s := range loadSampleBodies(t) {
		if s.name == "transactions/all" {
			rows, err := decodeLazy(s.body)
			if err != nil {
				t.Fatal(err)
			}
			return rows[:200]
		}
	}
	t.Fatal("no transactions/all body")
	return nil
}

// fullyDecoded reports whether tx's command has been decoded in full.
func fullyDecoded(tx Transaction) bool {
	return tx.LazyCommand.cell != nil && tx.LazyCommand.cell.full.Load() != nil
}

// A page decodes no command; PrepareCommands decodes, of each, what its
// use reads: nothing without a use, the heads of all and the members of
// the kinds it reads; the others are answered with shells of their types.
func TestCommandsDecodedAsRead(t *testing.T) {
	rows := lazyPage(t)
	for _, tx := range rows {
		if tx.LazyCommand.cell == nil || fullyDecoded(tx) || tx.LazyCommand.cell.head.Load() != nil {
			t.Fatalf("transaction %s: command decoded with the page", tx.Hash)
		}
	}
	same, err := PrepareCommands(rows, nil, EndpointTransactions)
	if err != nil || &same[0] != &rows[0] {
		t.Fatalf("PrepareCommands without a use: %v, rows copied", err)
	}

	use, err := NewCommandUse([]string{"OrderSubmission"})
	if err != nil {
		t.Fatal(err)
	}
	prepared, err := PrepareCommands(rows, use, EndpointTransactions)
	if err != nil {
		t.Fatal(err)
	}
	orders, others := 0, 0
	for i, tx := range prepared {
		member, err := tx.CommandMember()
		if err != nil {
			t.Fatal(err)
		}
		wantCmd, err := rows[i].DecodedCommand() // decodes rows[i] in full: only after the checks of tx
		if err != nil {
			t.Fatal(err)
		}
		if reflect.TypeOf(member) != reflect.TypeOf(wantCmd.Kind) {
			t.Fatalf("transaction %s: member %T, want %T", tx.Hash, member, wantCmd.Kind)
		}
		if nonce, _ := tx.CommandNonce(); nonce != wantCmd.Nonce {
			t.Fatalf("transaction %s: nonce %d, want %d", tx.Hash, nonce, wantCmd.Nonce)
		}
		switch member.(type) {
		case *OrderSubmission:
			orders++
			if !sameDecoded(member, wantCmd.Kind) {
				t.Fatalf("transaction %s: %#v, want %#v", tx.Hash, member, wantCmd.Kind)
			}
		case nil:
		default:
			others++
			if member != commandShells[commandNames[reflect.TypeOf(member)]] && member != unknownShell {
				t.Fatalf("transaction %s: %T decoded, though its fields are not read", tx.Hash, member)
			}
		}
	}
	if orders == 0 || others == 0 {
		t.Fatalf("%d order submissions and %d others among the first 200 transactions", orders, others)
	}
}

// A command that does not decode fails only the operations that read it:
// the page decodes; reading its head or its member gives the *DecodeError
// the whole page's decoding gave.
func TestBrokenCommandFailsOnlyWhereRead(t *testing.T) {
	body := []byte(`{"transactions":[` +
		`{"block":"7","index":1,"hash":"AB","command":{"nonce":"1","orderSubmission":{"size":"many"}}},` +
		`{"block":"7","index":0,"hash":"CD","command":{"nonce":"2","joinTeam":{"id":"t"}}}]}`)
	rows, err := decodeLazy(body)
	if err != nil {
		t.Fatalf("the page does not decode: %v", err)
	}
	if _, err := PrepareCommands(rows, nil, EndpointTransactions); err != nil {
		t.Fatalf("hashes only: %v", err)
	}
	joinTeam, _ := NewCommandUse([]string{"JoinTeam"})
	got, err := PrepareCommands(rows, joinTeam, EndpointTransactions)
	if err != nil {
		t.Fatalf("join team read: %v", err)
	}
	if _, err := decodeWhole(body); err == nil {
		t.Fatal("the whole decode accepts the broken command")
	}
	if m, err := got[0].CommandMember(); err != nil || m != commandShells["orderSubmission"] {
		t.Fatalf("the unread broken member: %#v, %v, want its shell", m, err)
	}
	orders, _ := NewCommandUse([]string{"OrderSubmission"})
	_, err = PrepareCommands(rows, orders, EndpointTransactions)
	var de *DecodeError
	var te *json.UnmarshalTypeError
	if !errors.As(err, &de) || de.Endpoint != EndpointTransactions || de.Service != ServiceExplorer || !errors.As(err, &te) ||
		te.Field != "transactions.command.orderSubmission.size" || te.Struct != "Transaction" {
		t.Fatalf("order submissions read: %v, want a *DecodeError naming transactions.command.orderSubmission.size", err)
	}
	// A lookup names its own body's path.
	_, err = PrepareCommands(rows[:1], EveryCommand, EndpointTransaction)
	if !errors.As(err, &te) || te.Field != "transaction.command.orderSubmission.size" || !errors.As(err, &de) || de.Endpoint != EndpointTransaction {
		t.Fatalf("lookup: %v", err)
	}
	// A row no resolver prepared reports the error where it is read.
	if _, err := rows[0].CommandMember(); !errors.As(err, &de) {
		t.Fatalf("unprepared member: %v, want a *DecodeError", err)
	}
	if _, err := WholeCommands(rows, EndpointTransactions); !errors.As(err, &de) {
		t.Fatalf("WholeCommands: %v, want a *DecodeError", err)
	}
	whole, err := WholeCommands(rows[1:], EndpointTransactions)
	if err != nil || whole[0].LazyCommand != (TxCommand{}) || whole[0].Command.Kind.(*JoinTeam).ID != "t" || rows[1].LazyCommand.cell == nil {
		t.Fatalf("WholeCommands of a good row: %+v, %v", whole, err)
	}
	if _, err := NewCommandUse([]string{"Transaction"}); err == nil {
		t.Fatal("NewCommandUse accepted a type outside the union")
	}
	if u, err := NewCommandUse(CommandTypes()); u != EveryCommand || err != nil {
		t.Fatalf("every member listed: %v, %v; want EveryCommand", u.Types(), err)
	}
}

// Decoded pages are shared by concurrent requests: each command is
// decoded once, whoever reads it first, and every reader gets the same
// value (run with -race).
func TestCommandsDecodedOnceUnderConcurrency(t *testing.T) {
	rows := lazyPage(t)
	orders, _ := NewCommandUse([]string{"OrderSubmission", "BatchMarketInstructions"})
	const readers = 8
	members := make([][]CommandKind, readers)
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			var use *CommandUse
			switch r % 3 {
			case 1:
				use = orders
			case 2:
				use = EveryCommand
			}
			view, err := PrepareCommands(rows, use, EndpointTransactions)
			if err != nil {
				t.Error(err)
				return
			}
			for _, tx := range view {
				m, err := tx.CommandMember()
				if err != nil {
					t.Error(err)
				}
				members[r] = append(members[r], m)
				if _, err := tx.MarshalJSON(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range rows {
		want, err := rows[i].DecodedCommand()
		if err != nil {
			t.Fatal(err)
		}
		for r := range readers {
			if r%3 != 1 && members[r][i] != want.Kind { // the same object: decoded once
				t.Fatalf("reader %d, transaction %d: a member decoded again", r, i)
			}
		}
	}
}

// The marshalled command is the one Command.MarshalJSON writes, whether
// the command was decoded or built in memory.
func TestTxCommandMarshalsAsCommand(t *testing.T) {
	for _, s := range []string{
		`{"nonce":"1","blockHeight":"2","joinTeam":{"id":"t"}}`,
		`{"joinTeam":{"id":"t"},"nonce":"1"}`,
		`{"nonce":"1","submitAmm":{"a":1}}`,
	} {
		var lazy TxCommand
		if err := json.Unmarshal([]byte(s), &lazy); err != nil {
			t.Fatal(err)
		}
		var typed Command
		if err := json.Unmarshal([]byte(s), &typed); err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(lazy)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(typed)
		if err != nil {
			t.Fatal(err)
		}
		built, err := json.Marshal(CommandOf(typed))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) || string(built) != string(want) {
			t.Errorf("%s: lazy %s, built %s, want %s", s, got, built, want)
		}
	}
	if b, err := json.Marshal(TxCommand{}); err != nil || string(b) != "null" {
		t.Errorf("null command: %s, %v", b, err)
	}
}

// TestWireTransactionMirrorsTransaction: the client decodes a page's
// transactions as wireTransaction, so every wire field of Transaction
// (each with a JSON name) must be one of wireTransaction's, of the same
// type and tag, the command excepted (its JSON is kept), and no other;
// a field added to one and not the other fails here, before a page
// silently drops it.
func TestWireTransactionMirrorsTransaction(t *testing.T) {
	wire := reflect.TypeFor[wireTransaction]()
	tx := reflect.TypeFor[Transaction]()
	seen := 0
	for f := range tx.Fields() {
		if f.Tag.Get("json") == "-" {
			continue
		}
		w, ok := wire.FieldByName(f.Name)
		if !ok {
			t.Errorf("Transaction.%s has no wireTransaction field", f.Name)
			continue
		}
		seen++
		if f.Tag != w.Tag {
			t.Errorf("%s: tag %q, wireTransaction's %q", f.Name, f.Tag, w.Tag)
		}
		if f.Name == "Command" {
			if w.Type != reflect.TypeFor[json.RawMessage]() {
				t.Errorf("wireTransaction.Command is %s, want the command's JSON", w.Type)
			}
		} else if f.Type != w.Type {
			t.Errorf("%s: %s, wireTransaction's %s", f.Name, f.Type, w.Type)
		}
	}
	if seen != wire.NumField() {
		t.Errorf("wireTransaction has %d fields, Transaction %d wire fields", wire.NumField(), seen)
	}
}

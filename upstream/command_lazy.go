package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
)

// A transaction's command is most of its bytes and, decoded into its
// member's structs, most of the cost of decoding a page of transactions;
// yet many operations read none of it (a page of hashes), or only the
// type of its member (`command { __typename }`), or the members of a few
// kinds. So the client decodes a page (pageBody, lookupBody) into
// wireTransactions, whose command is its JSON, kept as the explorer sent
// it (validated by the page's decoding, not parsed); the rows become
// Transactions holding it in LazyCommand (a TxCommand), and it is decoded
// when it is first read, once per transaction object, in two steps:
//
//   - its head: nonce, blockHeight and the name of its member, by one scan
//     of the command's keys that skips the member's value (scanCommand);
//   - in full: the typed Command, by Command.UnmarshalJSON, the reference
//     decoder that decoded every command of every page before.
//
// Decoded pages are shared by concurrent requests (the answer cache, the
// request memo, the live feed): both steps run under a sync.Once, and
// their results are published through atomic pointers, which also keep
// reflection (the page batch's walk of a page, graph/references.go) away from them.
//
// Which step a request needs is the operation's (CommandUse, computed in
// package graph): before a list or lookup resolver hands its rows to the
// executor, PrepareCommands decodes what the operation reads of each row,
// so that a command that fails to decode fails the list where the whole
// page's decoding failed before, with the same *DecodeError. It returns
// copies of the rows that carry the use, and a copy's Member answers a
// member whose fields the operation does not read with an empty value of
// the member's type (a shell): enough to choose the union member and to
// write its __typename. A command that is not read is not decoded, and a
// page whose unread commands would not decode now succeeds
// (docs/wire.md, Commands decoded as read).
//
// A TxCommand without a use (a row no resolver prepared) decodes in full
// when read, and reports a decoding error at the field that read it.
//
// Transaction.Command stays the typed command, decoded whole wherever a
// Transaction is decoded with its own type (encoding/json, the live
// feed's batches, the tests' reference) or built (the sample service).

// wireTransaction is a transaction as the client decodes it: Transaction's
// wire fields, its command kept undecoded.
type wireTransaction struct {
	Block     Uint64  `json:"block"`
	Index     Int32   `json:"index"`
	Hash      string  `json:"hash"`
	Submitter string  `json:"submitter"`
	Type      string  `json:"type"`
	Code      Int64   `json:"code"`
	Error     *string `json:"error,omitempty"`
	// Command is the command's JSON: a json.RawMessage, which go-json
	// hands over without a copy of its own (the message copies it once).
	// A duplicated "command" key keeps its last value, a null one
	// included, where Command.UnmarshalJSON ignores a later null; the
	// explorer writes each key once.
	Command   json.RawMessage    `json:"command"`
	Signature *Signature         `json:"signature"`
	CreatedAt Time               `json:"createdAt"`
	Version   TransactionVersion `json:"version"`
	Pow       *ProofOfWork       `json:"pow"`
}

// transaction is w as a Transaction, its command in LazyCommand.
func (w *wireTransaction) transaction() Transaction {
	tx := Transaction{Block: w.Block, Index: w.Index, Hash: w.Hash, Submitter: w.Submitter, Type: w.Type, Code: w.Code,
		Error: w.Error, Signature: w.Signature, CreatedAt: w.CreatedAt, Version: w.Version, Pow: w.Pow}
	if len(w.Command) > 0 && !isNull(w.Command) {
		tx.LazyCommand.cell = &commandCell{raw: w.Command}
	}
	return tx
}

// TxCommand is a transaction's command: its JSON as the explorer sent it,
// decoded as far as it is read. The zero TxCommand is a null command.
// Copies share their decoding.
type TxCommand struct {
	cell *commandCell
	// use is what the operation reads of commands, set on the copies
	// PrepareCommands returns; nil reads everything.
	use *CommandUse
}

// commandCell is one command's JSON and what has been decoded of it.
type commandCell struct {
	raw      []byte // the command object; nil for one built in memory (CommandOf)
	headOnce sync.Once
	head     atomic.Pointer[commandHead]
	fullOnce sync.Once
	full     atomic.Pointer[decodedCommand]
}

// commandHead is what the scan of a command's keys finds.
type commandHead struct {
	nonce, blockHeight Uint64
	// name is the member's wire name, "" when the command has none; known
	// is whether commandMembers describes it.
	name  string
	known bool
	err   error
}

// decodedCommand is a command decoded in full, or its decoding's error.
type decodedCommand struct {
	cmd Command
	err error
}

// CommandOf is cmd as a TxCommand, decoded already. The zero Command is a
// null command.
func CommandOf(cmd Command) TxCommand {
	if cmd == (Command{}) {
		return TxCommand{}
	}
	cell := &commandCell{}
	cell.full.Store(&decodedCommand{cmd: cmd})
	cell.fullOnce.Do(func() {})
	return TxCommand{cell: cell}
}

// UnmarshalJSON keeps the command's JSON (a copy of it), undecoded. A null
// leaves c as it is, as Command.UnmarshalJSON does.
func (c *TxCommand) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	*c = TxCommand{cell: &commandCell{raw: bytes.Clone(b)}}
	return nil
}

// MarshalJSON writes the command as Command.MarshalJSON does, from the
// command decoded in full; a command that does not decode is written as
// it was received.
func (c TxCommand) MarshalJSON() ([]byte, error) {
	if c.cell == nil {
		return []byte("null"), nil
	}
	d := c.cell.decoded()
	if d.err != nil {
		return c.cell.raw, nil
	}
	return d.cmd.MarshalJSON()
}

// Decode returns the command decoded in full (the zero Command for a null
// command), decoding it on first use; its error is Command.UnmarshalJSON's
// on the command's JSON.
func (c TxCommand) Decode() (Command, error) {
	if c.cell == nil {
		return Command{}, nil
	}
	d := c.cell.decoded()
	return d.cmd, d.err
}

// Member is the command's member, for GraphQL Transaction.command: nil
// for a null command; a shell of the member's type when c carries a use
// that does not read the member's fields; else the member decoded in
// full. Its error is a *DecodeError, which only a command no resolver
// prepared can give.
func (c TxCommand) Member() (CommandKind, error) {
	if c.cell == nil {
		return nil, nil
	}
	if c.use != nil && !c.use.all {
		h := c.head()
		if h.err != nil {
			return nil, commandError(EndpointTransactions, h.err)
		}
		if !c.use.reads(h) {
			return h.shell(), nil
		}
	}
	d := c.cell.decoded()
	if d.err != nil {
		return nil, commandError(EndpointTransactions, d.err)
	}
	return d.cmd.Kind, nil
}

// head returns the command's head, scanning it on first use (the zero
// head for a null command).
func (c TxCommand) head() *commandHead {
	if c.cell == nil {
		return &commandHead{}
	}
	return c.cell.scanned()
}

// Equal reports whether c and o decode to the same command, or fail to
// decode with the same error; what has been decoded of them, and their
// uses, do not matter. (go-cmp calls it to compare transactions.)
func (c TxCommand) Equal(o TxCommand) bool {
	a, aErr := c.Decode()
	b, bErr := o.Decode()
	if (aErr == nil) != (bErr == nil) || aErr != nil && aErr.Error() != bErr.Error() {
		return false
	}
	aJSON, aErr := a.MarshalJSON()
	bJSON, bErr := b.MarshalJSON()
	return aErr == nil && bErr == nil && bytes.Equal(aJSON, bJSON)
}

// decoded decodes the command in full on first use, with the reference
// decoder.
func (cell *commandCell) decoded() *decodedCommand {
	cell.fullOnce.Do(func() {
		d := &decodedCommand{}
		d.err = d.cmd.UnmarshalJSON(cell.raw)
		cell.full.Store(d)
	})
	return cell.full.Load()
}

// scanned scans the command's head on first use: from the command when
// it is decoded already (built in memory, or decoded in full before its
// head was asked: a page whose every kind is read), else from its JSON by
// scanCommand, the first half of the reference decoder.
func (cell *commandCell) scanned() *commandHead {
	cell.headOnce.Do(func() {
		h := &commandHead{}
		if d := cell.full.Load(); d != nil && d.err == nil {
			h.nonce, h.blockHeight = d.cmd.Nonce, d.cmd.BlockHeight
			switch k := d.cmd.Kind.(type) {
			case nil:
			case *UnknownCommand:
				h.name = k.Name
			default:
				h.name, h.known = commandNames[reflect.TypeOf(k)], true
			}
		} else {
			var cmd Command
			var member choice
			cmd, member, h.err = scanCommand(cell.raw)
			h.nonce, h.blockHeight = cmd.Nonce, cmd.BlockHeight
			if member.raw != nil {
				h.name, h.known = string(member.key), member.known
			}
		}
		cell.head.Store(h)
	})
	return cell.head.Load()
}

// shell is an empty value of the member's type: the union member to
// choose, with nothing of its own to read. The shells are shared and never
// written.
func (h *commandHead) shell() CommandKind {
	if h.known {
		return commandShells[h.name]
	}
	return unknownShell
}

var (
	commandShells = func() map[string]CommandKind {
		m := make(map[string]CommandKind, len(commandMembers.members))
		for name, newMember := range commandMembers.members {
			m[name] = newMember()
		}
		return m
	}()
	unknownShell CommandKind = &UnknownCommand{}
)

// CommandUse is what an operation reads of transactions' commands, beyond
// their heads: the member types whose fields it reads.
type CommandUse struct {
	members map[string]bool // wire names of the known members read
	unknown bool            // UnknownCommand's fields are read
	all     bool            // every member is read
}

// EveryCommand reads every command in full.
var EveryCommand = &CommandUse{all: true}

// NewCommandUse is the use reading the fields of the members whose
// GraphQL types (which are their Go types' names) are listed, and the
// heads of all commands. A name that is no member of the union Command is
// an error. A use listing every member is EveryCommand, which decodes
// each command whole without scanning its head first.
func NewCommandUse(types []string) (*CommandUse, error) {
	u := &CommandUse{members: map[string]bool{}}
	for _, t := range types {
		if t == "UnknownCommand" {
			u.unknown = true
			continue
		}
		name, ok := commandTypeNames[t]
		if !ok {
			return nil, fmt.Errorf("%s is not a member of the union Command", t)
		}
		u.members[name] = true
	}
	if u.unknown && len(u.members) == len(commandTypeNames) {
		return EveryCommand, nil
	}
	return u, nil
}

// commandTypeNames maps the Go type name of each known member to its wire
// name.
var commandTypeNames = func() map[string]string {
	m := make(map[string]string, len(commandNames))
	for typ, name := range commandNames {
		m[typ.Elem().Name()] = name
	}
	return m
}()

// CommandTypes lists the Go type names of the members of the union
// Command, UnknownCommand included, sorted.
func CommandTypes() []string {
	types := []string{"UnknownCommand"}
	for t := range commandTypeNames {
		types = append(types, t)
	}
	slices.Sort(types)
	return types
}

// Types lists the member types whose fields u reads, sorted; "*" stands
// for every member.
func (u *CommandUse) Types() []string {
	if u.all {
		return []string{"*"}
	}
	var types []string
	for typ, name := range commandTypeNames {
		if u.members[name] {
			types = append(types, typ)
		}
	}
	if u.unknown {
		types = append(types, "UnknownCommand")
	}
	slices.Sort(types)
	return types
}

// reads reports whether u reads the fields of the member h names.
func (u *CommandUse) reads(h *commandHead) bool {
	switch {
	case u.all:
		return true
	case h.known:
		return u.members[h.name]
	default:
		return u.unknown
	}
}

// PrepareCommands decodes, of each row's lazy command, what use reads: the
// head, and the member in full where use reads its fields; it returns
// copies of the rows that carry use (Member), or, for the first command
// that fails, the error decoding the page whole gave before: a
// *DecodeError of the explorer's endpoint (EndpointTransactions for a
// list, EndpointTransaction for a lookup), its Err encoding/json's error
// as the whole body's decoding reported it. A nil use reads nothing, and
// EveryCommand what a row without a use reads: rows are returned as they
// are.
func PrepareCommands(rows []Transaction, use *CommandUse, endpoint Endpoint) ([]Transaction, error) {
	if use == nil {
		return rows, nil
	}
	if use == EveryCommand {
		// A row without a use reads its command whole: no copies needed.
		for i := range rows {
			if c := rows[i].LazyCommand; c.cell != nil {
				if d := c.cell.decoded(); d.err != nil {
					return nil, commandError(endpoint, d.err)
				}
			}
		}
		return rows, nil
	}
	out := slices.Clone(rows)
	for i := range out {
		c := &out[i].LazyCommand
		c.use = use
		if err := c.prepare(); err != nil {
			return nil, commandError(endpoint, err)
		}
	}
	return out, nil
}

// WholeCommands returns copies of rows whose lazy commands are decoded
// whole into Command (LazyCommand left zero), as decoding the page whole
// gave them, or the error PrepareCommands gives. The live feed uses it:
// its transactions go to every subscription, whatever each reads.
func WholeCommands(rows []Transaction, endpoint Endpoint) ([]Transaction, error) {
	out := slices.Clone(rows)
	for i := range out {
		if c := out[i].LazyCommand; c.cell != nil {
			d := c.cell.decoded()
			if d.err != nil {
				return nil, commandError(endpoint, d.err)
			}
			out[i].Command, out[i].LazyCommand = d.cmd, TxCommand{}
		}
	}
	return out, nil
}

// prepare decodes what c's use reads of it, returning the decoder's error.
func (c TxCommand) prepare() error {
	if c.cell == nil {
		return nil
	}
	if !c.use.all {
		h := c.head()
		if h.err != nil || !c.use.reads(h) {
			return h.err
		}
	}
	return c.cell.decoded().err
}

// commandError is err, an error decoding a command, as the decoding of
// the whole body reported it: a *DecodeError of the explorer's endpoint,
// and, as encoding/json adds the context of the enclosing object to an
// UnmarshalJSON's type error, the transaction's type and the path from the
// body's root. (err is shared by the requests reading the command: it is
// copied, not changed.)
func commandError(endpoint Endpoint, err error) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		path := "transactions.command"
		if endpoint == EndpointTransaction {
			path = "transaction.command"
		}
		copied := *te
		copied.Struct = "Transaction"
		if copied.Field != "" {
			path += "." + copied.Field
		}
		copied.Field = path
		err = &copied
	}
	return &DecodeError{Service: ServiceExplorer, Endpoint: endpoint, Err: err}
}

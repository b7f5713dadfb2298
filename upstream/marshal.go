package upstream

import (
	"bytes"
	"encoding/json"
	"sync"
)

// The wire form. Every type of this package encodes to the JSON the
// upstream sends, so that one model serves both directions: the gateway
// decodes the upstream's bodies into these types, and the sample data
// service (package sampleservice) builds these types and encodes them to
// serve its bodies. Most types need nothing but their field tags: 64-bit
// integers are Int64, Uint64 and the time scalars, which write JSON
// strings; enums write their names (a value beyond the schema as a bare
// number, enums.go); an unset message is null; an unset optional field and
// every one-of member but the one set carry omitempty, so they are absent.
// This file holds the rest:
//
//   - the wire's 32-bit integers that a Go field holds in a 64-bit scalar
//     (its GraphQL type): the wire writes them as JSON numbers (a
//     signature's version, a transaction's code, a rank table's entries,
//     a key index, a multisig threshold);
//   - announceNode's fields named after the network on the wire (vega*);
//   - the transaction's cursor, which the explorer derives from its
//     position;
//   - the one-of groups decoded into an interface (a command's member, a
//     proposal's change), written after the object's other fields, as the
//     upstream writes them (field number order) and as the decoder's fast
//     path expects (oneOf.decodeLast).
//
// Like the upstream's encoder (protojson), the encoding does not escape
// <, > and & in strings.

// marshalWire encodes v as compact JSON without HTML escaping.
func marshalWire(v any) ([]byte, error) {
	buf := wireBuffers.Get().(*bytes.Buffer)
	defer wireBuffers.Put(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// wireBuffers are marshalWire's buffers: its result is a copy.
var wireBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// marshalOneOf writes the object of plain's fields (plain is a struct)
// followed by the one-of member under the key name; without a name, the
// object of plain's fields alone.
func marshalOneOf(plain any, name string, member any) ([]byte, error) {
	b, err := marshalWire(plain)
	if err != nil || name == "" {
		return b, err
	}
	key, err := marshalWire(name)
	if err != nil {
		return nil, err
	}
	value, err := marshalWire(member)
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // the closing brace
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, key...)
	b = append(b, ':')
	b = append(b, value...)
	return append(b, '}'), nil
}

// MarshalJSON writes the explorer's record: the cursor derived from the
// position, the code a JSON number, the error absent when unset. The
// command, written by its own MarshalJSON, is spliced in rather than
// encoded as a field, which would scan its JSON once more.
func (t Transaction) MarshalJSON() ([]byte, error) {
	head, err := marshalWire(struct {
		Block     Uint64 `json:"block"`
		Index     Int32  `json:"index"`
		Hash      string `json:"hash"`
		Submitter string `json:"submitter"`
		Type      string `json:"type"`
		Code      int64  `json:"code"`
		Cursor    string `json:"cursor"`
	}{t.Block, t.Index, t.Hash, t.Submitter, t.Type, int64(t.Code), t.Position().String()})
	if err != nil {
		return nil, err
	}
	marshalCommand := t.Command.MarshalJSON
	if t.LazyCommand.cell != nil {
		marshalCommand = t.LazyCommand.MarshalJSON
	}
	command, err := marshalCommand()
	if err != nil {
		return nil, err
	}
	tail, err := marshalWire(struct {
		Signature *Signature         `json:"signature"`
		Error     *string            `json:"error,omitempty"`
		CreatedAt Time               `json:"createdAt"`
		Version   TransactionVersion `json:"version"`
		Pow       *ProofOfWork       `json:"pow"`
	}{t.Signature, t.Error, t.CreatedAt, t.Version, t.Pow})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(head)+len(command)+len(tail)+12)
	b = append(b, head[:len(head)-1]...)
	b = append(b, `,"command":`...)
	b = append(b, command...)
	b = append(b, ',')
	return append(b, tail[1:]...), nil
}

// MarshalJSON writes the signature with its version a JSON number (a u32).
func (s Signature) MarshalJSON() ([]byte, error) {
	return marshalWire(struct {
		Value   string `json:"value"`
		Algo    string `json:"algo"`
		Version int64  `json:"version"`
	}{s.Value, s.Algo, int64(s.Version)})
}

// MarshalJSON writes the announcement with the wire's names (vegaPubKey,
// vegaPubKeyIndex, vegaSignature), the key index a JSON number (a u32).
func (a AnnounceNode) MarshalJSON() ([]byte, error) {
	return marshalWire(struct {
		VegaPubKey        string     `json:"vegaPubKey"`
		EthereumAddress   string     `json:"ethereumAddress"`
		ChainPubKey       string     `json:"chainPubKey"`
		InfoURL           string     `json:"infoUrl"`
		Country           string     `json:"country"`
		ID                string     `json:"id"`
		Name              string     `json:"name"`
		AvatarURL         string     `json:"avatarUrl"`
		VegaPubKeyIndex   int64      `json:"vegaPubKeyIndex"`
		FromEpoch         Uint64     `json:"fromEpoch"`
		EthereumSignature *Signature `json:"ethereumSignature"`
		VegaSignature     *Signature `json:"vegaSignature"`
		SubmitterAddress  string     `json:"submitterAddress"`
	}{
		a.NetPubKey, a.EthereumAddress, a.ChainPubKey, a.InfoURL, a.Country, a.ID, a.Name, a.AvatarURL,
		int64(a.NetPubKeyIndex), a.FromEpoch, a.EthereumSignature, a.NetSignature, a.SubmitterAddress,
	})
}

// MarshalJSON writes the rotation with the key index a JSON number (a u32).
func (k KeyRotateSubmission) MarshalJSON() ([]byte, error) {
	return marshalWire(struct {
		NewPubKeyIndex    uint64 `json:"newPubKeyIndex"`
		TargetBlock       Uint64 `json:"targetBlock"`
		NewPubKey         string `json:"newPubKey"`
		CurrentPubKeyHash string `json:"currentPubKeyHash"`
	}{uint64(k.NewPubKeyIndex), k.TargetBlock, k.NewPubKey, k.CurrentPubKeyHash})
}

// MarshalJSON writes the event with the threshold a JSON number (a u32).
func (e ERC20ThresholdSet) MarshalJSON() ([]byte, error) {
	return marshalWire(struct {
		NewThreshold uint64      `json:"newThreshold"`
		Nonce        string      `json:"nonce"`
		BlockTime    UnixSeconds `json:"blockTime"`
	}{uint64(e.NewThreshold), e.Nonce, e.BlockTime})
}

// MarshalJSON writes the entry's numbers as JSON numbers (u32s).
func (r RankTable) MarshalJSON() ([]byte, error) {
	return marshalWire(struct {
		StartRank  int64 `json:"startRank"`
		ShareRatio int64 `json:"shareRatio"`
	}{int64(r.StartRank), int64(r.ShareRatio)})
}

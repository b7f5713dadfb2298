package live

// Placeholders so that the contract in api.go compiles; the live-core
// branch replaces this file with the implementation.

import (
	"context"

	"github.com/tradenet/gateway/upstream"
)

type feed[T any] struct{}

func newFeed[T any](Config, func(*upstream.Transaction) T) *feed[T] { return &feed[T]{} }

func (f *feed[T]) subscribe(context.Context, SubscribeOptions) (*Subscription[T], error) {
	panic("live: not implemented")
}
func (f *feed[T]) close()       {}
func (f *feed[T]) stats() Stats { return Stats{State: "idle"} }

type subscriber[T any] struct{}

func (s *subscriber[T]) channel() <-chan T { return nil }
func (s *subscriber[T]) err() error        { return nil }
func (s *subscriber[T]) close()            {}

func encodeBatch(Batch) ([]byte, error) { panic("live: not implemented") }
func decodeBatch([]byte) (Batch, error) { panic("live: not implemented") }

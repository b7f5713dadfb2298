package graph

import "github.com/tradenet/gateway/upstream"

// party serves Query.party. A party is its public key: the object only
// groups the lists filtered by it, so no upstream call is needed.
func (r *Resolver) party(id string) (*upstream.Party, error) {
	if err := checkID("id", "party", &id); err != nil {
		return nil, err
	}
	return &upstream.Party{ID: id}, nil
}

// validatorNode serves Query.validatorNode, like party.
func (r *Resolver) validatorNode(id string) (*upstream.ValidatorNode, error) {
	if err := checkID("id", "node", &id); err != nil {
		return nil, err
	}
	return &upstream.ValidatorNode{ID: id}, nil
}

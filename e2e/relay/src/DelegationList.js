// Delegations: the root list (filtered by node and epoch) and a validator
// node's own list, each with @connection.

export const DelegationListQuery = graphql`
  query DelegationListQuery($nodeId: ID, $epochId: ID) {
    ...DelegationList_delegations @arguments(nodeId: $nodeId, epochId: $epochId)
  }
`;

export const DelegationListFragment = graphql`
  fragment DelegationList_delegations on Query
  @argumentDefinitions(
    nodeId: { type: "ID" }
    epochId: { type: "ID" }
    count: { type: "Int", defaultValue: 50 }
    cursor: { type: "String" }
  )
  @refetchable(queryName: "DelegationListPaginationQuery") {
    delegations(nodeId: $nodeId, epochId: $epochId, first: $count, after: $cursor)
    @connection(key: "DelegationList_delegations", filters: ["nodeId", "epochId"]) {
      edges { node { party { id } nodeId epochSeq amount } }
    }
  }
`;

export const ValidatorDelegationsFragment = graphql`
  fragment DelegationList_validator on ValidatorNode
  @argumentDefinitions(count: { type: "Int", defaultValue: 10 }, cursor: { type: "String" }) {
    id
    delegations(first: $count, after: $cursor) @connection(key: "DelegationList_validator_delegations") {
      edges { node { party { id } epochSeq amount } }
    }
  }
`;

// A party page: its funding payments and delegations, each a connection
// nested under party(id:). Party is not a Node (its id is a public key,
// shared with validator nodes), so pagination fragments refetch through
// Query, with the party's id as an argument.

export const PartyPageQuery = graphql`
  query PartyPageQuery($partyId: ID!) {
    party(id: $partyId) { id }
    ...PartyPage_fundingPayments @arguments(partyId: $partyId)
    ...PartyPage_delegations @arguments(partyId: $partyId)
  }
`;

export const FundingPaymentsFragment = graphql`
  fragment PartyPage_fundingPayments on Query
  @argumentDefinitions(
    partyId: { type: "ID!" }
    count: { type: "Int", defaultValue: 20 }
    cursor: { type: "String" }
    marketId: { type: "ID" }
  )
  @refetchable(queryName: "PartyPageFundingPaymentsPaginationQuery") {
    party(id: $partyId) {
      fundingPayments(marketId: $marketId, first: $count, after: $cursor)
      @connection(key: "PartyPage_fundingPayments", filters: ["marketId"]) {
        edges { node { marketId fundingPeriodSeq amount timestamp } }
      }
    }
  }
`;

export const DelegationsFragment = graphql`
  fragment PartyPage_delegations on Query
  @argumentDefinitions(
    partyId: { type: "ID!" }
    count: { type: "Int", defaultValue: 20 }
    cursor: { type: "String" }
  )
  @refetchable(queryName: "PartyPageDelegationsPaginationQuery") {
    party(id: $partyId) {
      delegations(first: $count, after: $cursor) @connection(key: "PartyPage_delegations") {
        edges { node { nodeId epochSeq amount node { id } } }
      }
    }
  }
`;

// The root funding-payment list of one party, paged backwards from its
// oldest end (last/before) and forwards (first/after).

export const FundingPaymentsQuery = graphql`
  query FundingPaymentsQuery($partyId: ID!) {
    ...FundingPayments_list @arguments(partyId: $partyId)
  }
`;

export const FundingPaymentsFragment = graphql`
  fragment FundingPayments_list on Query
  @argumentDefinitions(
    partyId: { type: "ID!" }
    first: { type: "Int", defaultValue: 20 }
    after: { type: "String" }
    last: { type: "Int" }
    before: { type: "String" }
  )
  @refetchable(queryName: "FundingPaymentsPaginationQuery") {
    fundingPayments(partyId: $partyId, first: $first, after: $after, last: $last, before: $before)
    @connection(key: "FundingPayments_fundingPayments", filters: ["partyId"]) {
      edges { node { marketId fundingPeriodSeq amount timestamp party { id } } }
    }
  }
`;

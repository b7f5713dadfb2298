// A transaction feed paged both ways (newer with last/before, older with
// first/after), with fragments on the Command and ProposalChangeKind unions.

export const TransactionFeedQuery = graphql`
  query TransactionFeedQuery($cmdTypes: [String!]) {
    ...TransactionFeed_transactions @arguments(cmdTypes: $cmdTypes)
  }
`;

export const TransactionFeedFragment = graphql`
  fragment TransactionFeed_transactions on Query
  @argumentDefinitions(
    first: { type: "Int", defaultValue: 25 }
    after: { type: "String" }
    last: { type: "Int" }
    before: { type: "String" }
    cmdTypes: { type: "[String!]" }
  )
  @refetchable(queryName: "TransactionFeedPaginationQuery") {
    transactions(first: $first, after: $after, last: $last, before: $before, cmdTypes: $cmdTypes)
    @connection(key: "TransactionFeed_transactions", filters: ["cmdTypes"]) {
      edges {
        node {
          hash
          block
          index
          type
          createdAt
          submitter { id }
          command { ...TransactionFeed_command }
        }
      }
    }
  }
`;

export const CommandFragment = graphql`
  fragment TransactionFeed_command on Command {
    __typename
    ... on AnnounceNode { name country node { id } }
    ... on ApplyReferralCode { id }
    ... on BatchMarketInstructions {
      submissions { marketId side size price }
      cancellations { orderId marketId }
    }
    ... on BatchProposalSubmission {
      rationale { title }
      terms { changes { enactmentTimestamp change { ...TransactionFeed_change } } }
    }
    ... on UnknownCommand { name raw }
  }
`;

export const ChangeFragment = graphql`
  fragment TransactionFeed_change on ProposalChangeKind {
    __typename
    ... on NewMarket { changes { instrument { code name } } }
    ... on UpdateNetworkParameter { changes { key value } }
    ... on UpdateAsset { asset { id details { symbol } } }
    ... on UnknownProposalChange { name raw }
  }
`;

// An asset list with "load more", as Relay's usePaginationFragment pages it.
// Compiled by relay-compiler in the e2e checks (no React needed to compile).

export const AssetListQuery = graphql`
  query AssetListQuery($count: Int!, $cursor: String) {
    ...AssetList_assets @arguments(count: $count, cursor: $cursor)
  }
`;

export const AssetListFragment = graphql`
  fragment AssetList_assets on Query
  @argumentDefinitions(count: { type: "Int", defaultValue: 20 }, cursor: { type: "String" })
  @refetchable(queryName: "AssetListPaginationQuery") {
    assets(first: $count, after: $cursor) @connection(key: "AssetList_assets") {
      edges {
        node {
          id
          status
          details { name symbol decimals quantum }
        }
      }
    }
  }
`;

// Apollo Client (relayStylePagination, possibleTypes) against the gateway
// over the sample service: every walk of a connection, forwards to its end
// and backwards to its start, collects exactly the sample dataset's rows;
// union fragments read every command kind and every proposal change kind.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client/core';
import { buildSchema } from 'graphql';
import { makeClient, walk, possibleTypesOf } from '../lib/apollo.mjs';
import { gatewayURL, upstreamURL, getJSON, servedSDL, dataNodeList, explorerList } from '../lib/env.mjs';

let sdl;
const warnings = [];
before(async () => {
  sdl = await servedSDL();
  // Apollo reports cache trouble (missing fields, data that cannot be
  // merged) as console warnings: any of them fails the suite.
  for (const level of ['warn', 'error']) {
    const orig = console[level];
    console[level] = (...args) => {
      warnings.push(args.map(String).join(' '));
      orig(...args);
    };
  }
});

const PAGE_INFO = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';

async function bothWays(t, spec, expected, key) {
  const keys = (edges) => edges.map((e) => key(e.node));
  const want = expected.map(key);
  assert.ok(want.length > spec.pageSize * 2, `the list (${want.length} rows) spans several pages of ${spec.pageSize}`);
  const fwd = await walk(makeClient(gatewayURL(), sdl), { ...spec, direction: 'forward' });
  assert.deepEqual(keys(fwd.edges), want, 'forward walk collects the dataset in order');
  assert.equal(fwd.pages, Math.ceil(want.length / spec.pageSize), `forward pages: ${fwd.pageSizes}`);
  assert.equal(fwd.pageInfo.hasNextPage, false);
  const back = await walk(makeClient(gatewayURL(), sdl), { ...spec, direction: 'backward' });
  assert.deepEqual(keys(back.edges), want, 'backward walk collects the dataset in order');
  assert.equal(back.pages, Math.ceil(want.length / spec.pageSize), `backward pages: ${back.pageSizes}`);
  assert.equal(back.pageInfo.hasPreviousPage, false);
  t.diagnostic(`${want.length} rows: ${fwd.pages} pages forwards, ${back.pages} backwards`);
}

test('assets: forwards to the end and backwards to the start equal the data node\'s list', async (t) => {
  const expected = await dataNodeList('/api/v2/assets', {}, 'assets');
  await bothWays(t, {
    query: gql`query AssetPages($first: Int, $after: String, $last: Int, $before: String) {
      assets(first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { id status details { symbol decimals } } }
        ${PAGE_INFO}
      }
    }`,
    pick: (d) => d.assets,
    pageSize: 7,
  }, expected, (a) => [a.id, a.status, a.details.symbol, a.details.decimals].join('|'));
});

test('delegations of one node: both walks equal the data node\'s list', async (t) => {
  const node = await newestDelegationNode();
  const expected = await dataNodeList('/api/v2/delegations', { nodeId: node }, 'delegations');
  await bothWays(t, {
    query: gql`query NodeDelegations($node: ID!, $first: Int, $after: String, $last: Int, $before: String) {
      delegations(nodeId: $node, first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { party { id } nodeId node { id } epochSeq amount } }
        ${PAGE_INFO}
      }
    }`,
    variables: { node },
    pick: (d) => d.delegations,
    pageSize: 40,
  }, expected, (d) => [d.party?.id ?? d.party, d.nodeId, d.epochSeq, d.amount].join('|'));
});

// The node of the newest delegation in the sample data.
async function newestDelegationNode() {
  const body = await getJSON(`${upstreamURL()}/api/v2/delegations?pagination.first=1`);
  return body.delegations.edges[0].node.nodeId;
}

// A party that has funding payments and transactions in the sample data:
// the submitter of the newest batch of market instructions.
async function activeParty() {
  const [tx] = await explorerList({ first: '1', cmdTypes: 'Batch Market Instructions' });
  return tx.submitter;
}

test('a party\'s funding payments (nested connection): both walks equal the data node\'s list', async (t) => {
  const party = await activeParty();
  const expected = await dataNodeList('/api/v2/funding-payments', { partyId: party }, 'fundingPayments');
  await bothWays(t, {
    query: gql`query PartyFunding($party: ID!, $first: Int, $after: String, $last: Int, $before: String) {
      party(id: $party) {
        id
        fundingPayments(first: $first, after: $after, last: $last, before: $before) {
          edges { cursor node { partyId marketId fundingPeriodSeq amount timestamp } }
          ${PAGE_INFO}
        }
      }
    }`,
    variables: { party },
    pick: (d) => d.party.fundingPayments,
    pageSize: 45,
  }, expected, (f) => [f.partyId, f.marketId, f.fundingPeriodSeq, f.amount].join('|'));
});

test('a party\'s transactions: both walks equal the explorer\'s list', async (t) => {
  const party = await activeParty();
  const expected = await explorerList({ parties: party });
  await bothWays(t, {
    query: gql`query PartyTransactions($parties: [ID!], $first: Int, $after: String, $last: Int, $before: String) {
      transactions(parties: $parties, first: $first, after: $after, last: $last, before: $before) {
        edges { cursor node { block index hash type submitter { id } } }
        ${PAGE_INFO}
      }
    }`,
    variables: { parties: [party] },
    pick: (d) => d.transactions,
    pageSize: 25,
  }, expected, (x) => [x.block, x.index, x.hash, x.type].join('|'));
});

// --- Union fragments --------------------------------------------------------

const COMMANDS = gql`
  query CommandKinds($cmdTypes: [String!], $first: Int) {
    transactions(cmdTypes: $cmdTypes, first: $first) {
      edges { node { block index type command { __typename ...CommandFields } } }
      pageInfo { hasNextPage endCursor }
    }
  }
  fragment CommandFields on Command {
    ... on AnnounceNode { id name country infoUrl fromEpoch node { id } }
    ... on ApplyReferralCode { id }
    ... on OrderSubmission { marketId side size price }
    ... on BatchMarketInstructions {
      submissions { marketId side size price }
      amendments { orderId marketId }
      cancellations { orderId marketId }
    }
    ... on BatchProposalSubmission {
      rationale { title }
      terms { changes { change { __typename ...ChangeFields } } }
    }
    ... on UnknownCommand { name raw }
  }
  fragment ChangeFields on ProposalChangeKind {
    ... on CancelTransfer { changes { transferId } }
    ... on NewFreeform { raw }
    ... on NewMarket { changes { instrument { code name } } }
    ... on NewSpotMarket { changes { instrument { code name } } }
    ... on NewTransfer { changes { amount } }
    ... on UpdateAsset { assetId changes { quantum } }
    ... on UpdateMarket { marketId }
    ... on UpdateMarketState { changes { marketId } }
    ... on UpdateNetworkParameter { changes { key value } }
    ... on UpdateSpotMarket { marketId }
    ... on UpdateReferralProgram { changes { windowLength } }
    ... on UpdateVolumeDiscountProgram { changes { windowLength } }
    ... on UnknownProposalChange { name raw }
  }
`;

// The wire member of each proposal change kind the schema describes.
const CHANGE_MEMBERS = {
  cancelTransfer: 'CancelTransfer', newFreeform: 'NewFreeform', newMarket: 'NewMarket',
  newSpotMarket: 'NewSpotMarket', newTransfer: 'NewTransfer', updateAsset: 'UpdateAsset',
  updateMarket: 'UpdateMarket', updateMarketState: 'UpdateMarketState',
  updateNetworkParameter: 'UpdateNetworkParameter', updateSpotMarket: 'UpdateSpotMarket',
  updateReferralProgram: 'UpdateReferralProgram', updateVolumeDiscountProgram: 'UpdateVolumeDiscountProgram',
};
const CHANGE_TIMES = new Set(['closingTimestamp', 'enactmentTimestamp', 'validationTimestamp']);

function checkChange(got, wire, where) {
  const member = Object.keys(wire).find((k) => !CHANGE_TIMES.has(k));
  const kind = CHANGE_MEMBERS[member] ?? 'UnknownProposalChange';
  assert.equal(got.__typename, kind, `${where}: ${member}`);
  const w = wire[member];
  switch (kind) {
    case 'UnknownProposalChange': assert.equal(got.name, member); assert.deepEqual(got.raw, w); break;
    case 'UpdateNetworkParameter': assert.deepEqual(got.changes, { __typename: 'NetworkParameter', key: w.changes.key, value: w.changes.value }); break;
    case 'UpdateMarket': assert.equal(got.marketId, w.marketId); break;
    case 'UpdateMarketState': assert.equal(got.changes.marketId, w.changes.marketId); break;
    case 'UpdateAsset': assert.equal(got.assetId, w.assetId); assert.equal(got.changes.quantum, w.changes.quantum); break;
    case 'NewMarket': case 'NewSpotMarket': assert.equal(got.changes.instrument.code, w.changes.instrument.code); break;
    case 'CancelTransfer': assert.equal(got.changes.transferId, w.changes.transferId); break;
    case 'NewTransfer': assert.equal(got.changes.amount, w.changes.amount); break;
    case 'NewFreeform': assert.deepEqual(got.raw, w); break;
    case 'UpdateSpotMarket': assert.equal(got.marketId, w.marketId); break;
    case 'UpdateReferralProgram': case 'UpdateVolumeDiscountProgram': assert.equal(got.changes.windowLength, w.changes.windowLength); break;
  }
  return kind;
}

function checkCommand(got, wire, where) {
  const cmd = got.command;
  switch (cmd.__typename) {
    case 'AnnounceNode': {
      const w = wire.announceNode;
      assert.deepEqual([cmd.id, cmd.name, cmd.country, cmd.infoUrl, cmd.fromEpoch, cmd.node.id], [w.id, w.name, w.country, w.infoUrl, w.fromEpoch, w.id], where);
      break;
    }
    case 'ApplyReferralCode': assert.equal(cmd.id, wire.applyReferralCode.id, where); break;
    case 'OrderSubmission': {
      const w = wire.orderSubmission;
      assert.deepEqual([cmd.marketId, cmd.side, cmd.size, cmd.price], [w.marketId, w.side, w.size, w.price], where);
      break;
    }
    case 'BatchMarketInstructions': {
      const w = wire.batchMarketInstructions;
      assert.deepEqual(cmd.submissions.map((s) => [s.marketId, s.side, s.size, s.price]), (w.submissions ?? []).map((s) => [s.marketId, s.side, s.size, s.price]), where);
      assert.deepEqual(cmd.cancellations.map((c) => [c.orderId, c.marketId]), (w.cancellations ?? []).map((c) => [c.orderId, c.marketId]), where);
      assert.equal(cmd.amendments.length, (w.amendments ?? []).length, where);
      break;
    }
    case 'BatchProposalSubmission': {
      const w = wire.batchProposalSubmission;
      assert.equal(cmd.rationale?.title, w.rationale?.title, where);
      assert.equal(cmd.terms.changes.length, w.terms.changes.length, where);
      break;
    }
    case 'UnknownCommand': {
      // A kind newer than the explorer's schema: no member at all; the
      // name is empty and raw is the whole command.
      const member = Object.keys(wire).find((k) => k !== 'nonce' && k !== 'blockHeight');
      assert.equal(cmd.name, member ?? '', where);
      assert.deepEqual(cmd.raw, member ? wire[member] : wire, where);
      break;
    }
    default: assert.fail(`${where}: unexpected command ${cmd.__typename}`);
  }
}

test('union fragments read every command kind and every proposal change kind', async (t) => {
  const schema = buildSchema(sdl);
  const possible = possibleTypesOf(schema);
  const client = makeClient(gatewayURL(), sdl);
  // One command type string per kind read here (the other members are
  // compared with their wire records field by field in Go:
  // graph/wire_record_test.go, and the memberless UnknownCommand by the
  // golden command.unknown: its type string, newer than v0.74, is not a
  // valid cmdTypes value).
  const byType = {
    'Register New Node': 'AnnounceNode',
    'Apply Referral Code': 'ApplyReferralCode',
    'Batch Market Instructions': 'BatchMarketInstructions',
    'Batch Proposal': 'BatchProposalSubmission',
    'Submit Order': 'OrderSubmission',
  };
  const kindsSeen = new Set();
  const changesSeen = new Set();
  for (const [cmdType, kind] of Object.entries(byType)) {
    const first = cmdType === 'Batch Proposal' ? 1000 : 20; // every batch proposal: every change kind
    const wire = await explorerList({ first: String(first), cmdTypes: cmdType });
    const { data } = await client.query({ query: COMMANDS, variables: { cmdTypes: [cmdType], first } });
    const nodes = data.transactions.edges.map((e) => e.node);
    assert.ok(nodes.length > 0, `no ${cmdType} transactions in the sample data`);
    assert.deepEqual(nodes.map((n) => `${n.block}.${n.index}`), wire.map((w) => `${w.block}.${w.index}`), cmdType);
    nodes.forEach((n, i) => {
      const where = `${cmdType} ${n.block}.${n.index}`;
      assert.equal(n.command.__typename, kind, where);
      kindsSeen.add(n.command.__typename);
      checkCommand(n, wire[i].command, where);
      if (kind === 'BatchProposalSubmission') {
        n.command.terms.changes.forEach((c, j) => changesSeen.add(checkChange(c.change, wire[i].command.batchProposalSubmission.terms.changes[j], `${where} change ${j}`)));
      }
    });
  }
  assert.deepEqual([...kindsSeen].sort(), Object.values(byType).sort(), 'every kind asked for was read');
  assert.ok([...kindsSeen].every((k) => possible.Command.includes(k)), 'possibleTypes knows every kind read');
  // Batch proposals carry every change kind but NewAsset (single proposals
  // only); none is unknown at v0.74.
  const batchKinds = possible.ProposalChangeKind.filter((k) => k !== 'NewAsset' && k !== 'UnknownProposalChange');
  assert.deepEqual([...changesSeen].sort(), batchKinds.sort(), 'every batch change kind was read');
  t.diagnostic(`commands: ${[...kindsSeen].join(', ')}; changes: ${[...changesSeen].join(', ')}`);
  // possibleTypes is what lets the cache match the fragments on the unions:
  // reading the query back from the cache gives the same data.
  const cached = client.readQuery({ query: COMMANDS, variables: { cmdTypes: ['Batch Proposal'], first: 1000 } });
  assert.ok(cached.transactions.edges.every((e) => e.node.command.terms), 'the cache matched fragments on union members');
});

test('without possibleTypes the cache drops the fields of fragments on unions (the check above would fail)', async () => {
  const client = new ApolloClient({ link: new HttpLink({ uri: `${gatewayURL()}/graphql` }), cache: new InMemoryCache() });
  const { data } = await client.query({ query: COMMANDS, variables: { cmdTypes: ['Batch Proposal'], first: 5 } });
  const commands = data.transactions.edges.map((e) => e.node.command);
  assert.ok(commands.length > 0);
  assert.ok(commands.every((c) => c.__typename === 'BatchProposalSubmission' && c.terms === undefined && c.rationale === undefined),
    JSON.stringify(commands[0]));
});

test('a request error reaches Apollo as GraphQL errors, not a network error (400 in application/graphql-response+json)', async () => {
  // Apollo Client sends Accept: application/graphql-response+json,application/json;q=0.9;
  // the gateway answers a validation error 400 in that type, without data,
  // and Apollo reads the body as a GraphQL result because of its type.
  const seen = [];
  const fetchSpy = async (url, init) => {
    const res = await fetch(url, init);
    seen.push({ accept: new Headers(init.headers).get('accept'), status: res.status, type: res.headers.get('content-type') });
    return res;
  };
  const client = new ApolloClient({ link: new HttpLink({ uri: `${gatewayURL()}/graphql`, fetch: fetchSpy }), cache: new InMemoryCache() });
  const error = await client.query({ query: gql`{ assets(first: 1) { edges { node { notAField } } } }` }).then(
    () => assert.fail('the query succeeded'),
    (e) => e,
  );
  assert.ok(CombinedGraphQLErrors.is(error), `${error?.name}: ${error?.message}`);
  assert.equal(error.errors[0].extensions.code, 'BAD_USER_INPUT');
  assert.match(error.errors[0].message, /notAField/);
  assert.equal(error.data, undefined);
  assert.deepEqual(seen, [{ accept: 'application/graphql-response+json,application/json;q=0.9', status: 400, type: 'application/graphql-response+json' }]);
});

test('Apollo reported no cache warnings', () => {
  assert.deepEqual(warnings, []);
});

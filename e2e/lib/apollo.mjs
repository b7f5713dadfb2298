// An Apollo Client configured as a frontend would configure it for this
// gateway: relayStylePagination on every connection field, possibleTypes
// for the unions and the Node interface; for live pages, subscriptions
// over graphql-ws and @defer over multipart/mixed, or everything over
// HTTP (subscriptions as Apollo's multipart protocol).
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client/core';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import { buildSchema, isAbstractType, isObjectType, getNamedType } from 'graphql';
import { createClient } from 'graphql-ws';
import { firstValueFrom, filter } from 'rxjs';
import WebSocket from 'ws';

/**
 * possibleTypes from the schema, as `graphql-codegen`'s fragment-matcher
 * output or a build step would give it: every union and interface with
 * its members.
 */
export function possibleTypesOf(schema) {
  const out = {};
  for (const type of Object.values(schema.getTypeMap())) {
    if (isAbstractType(type) && !type.name.startsWith('__')) {
      out[type.name] = schema.getPossibleTypes(type).map((t) => t.name);
    }
  }
  return out;
}

const PAGING_ARGS = new Set(['first', 'after', 'last', 'before']);
// The types whose `id` is their identity (docs/contracts.md, Schema: ids are the network's keys).
const ENTITIES = new Set(['Asset', 'Party', 'ValidatorNode']);

/**
 * relayStylePagination for every field of every object type that returns
 * a …Connection, keyed by the field's non-paging arguments (filters and
 * order), so pages of one list merge and different lists stay apart.
 */
export function connectionTypePolicies(schema) {
  const policies = {};
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (!getNamedType(field.type).name.endsWith('Connection')) continue;
      const keyArgs = field.args.map((a) => a.name).filter((n) => !PAGING_ARGS.has(n));
      policies[type.name] ??= { fields: {} };
      policies[type.name].fields[field.name] = relayStylePagination(keyArgs.length ? keyArgs : false);
    }
  }
  return policies;
}

/** The InMemoryCache a frontend of this gateway configures, from the schema's SDL. */
export function makeCache(sdl) {
  const schema = buildSchema(sdl);
  const typePolicies = connectionTypePolicies(schema);
  // Only the entities are identified by their `id`. Command and change
  // values carry an `id` that is not an identity (an announced node's key,
  // a referral code, a team, a signature's resource): keep them inside
  // their transaction instead of merging every value that shares the id.
  for (const type of Object.values(schema.getTypeMap())) {
    if (isObjectType(type) && !type.name.startsWith('__') && type.getFields().id && !ENTITIES.has(type.name)) {
      typePolicies[type.name] = { ...typePolicies[type.name], keyFields: false };
    }
  }
  return new InMemoryCache({ possibleTypes: possibleTypesOf(schema), typePolicies });
}

export function makeClient(gatewayURL, sdl) {
  return new ApolloClient({ link: new HttpLink({ uri: `${gatewayURL}/graphql` }), cache: makeCache(sdl) });
}

/**
 * An Apollo Client for live pages: subscriptions go over one WebSocket
 * (graphql-ws's client, the graphql-transport-ws protocol, `ws` as the
 * WebSocket of Node), queries and mutations over HTTP, where @defer
 * arrives as multipart/mixed (Apollo's 2022-08-24 incremental format,
 * gqlgen's). fetch (optional) wraps the HttpLink's fetch, to watch the
 * requests. Returns the client and the graphql-ws client (dispose() it).
 */
export function makeLiveClient(gatewayURL, sdl, { fetch: fetchImpl = fetch, wsOptions = {} } = {}) {
  // GraphQLWsLink tells a socket's error event by `WebSocket.CLOSED` of the
  // global WebSocket, which browsers and Node 22 have and Node 20 lacks
  // (without it a refused connection throws a ReferenceError instead of
  // failing the subscription): give it `ws`'s, as a Node 20 app must.
  globalThis.WebSocket ??= WebSocket;
  const wsClient = createClient({
    url: `${gatewayURL.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    // Errors surface to the test instead of a silent reconnect.
    retryAttempts: 0,
    lazy: true,
    ...wsOptions,
  });
  const isSubscription = ({ query }) => {
    const def = getMainDefinition(query);
    return def.kind === 'OperationDefinition' && def.operation === 'subscription';
  };
  const link = ApolloLink.split(isSubscription, new GraphQLWsLink(wsClient), new HttpLink({ uri: `${gatewayURL}/graphql`, fetch: fetchImpl }));
  const client = new ApolloClient({ link, cache: makeCache(sdl), incrementalHandler: new Defer20220824Handler() });
  return { client, wsClient };
}

/**
 * An Apollo Client over HTTP alone, as an app without a WebSocket
 * configures it: one HttpLink, which carries @defer as multipart/mixed
 * (Apollo's 2022-08-24 incremental format, through the
 * Defer20220824Handler) and subscriptions as Apollo's multipart
 * subscription protocol (its default for a subscription sent over HTTP:
 * `Accept: multipart/mixed;boundary=graphql;subscriptionSpec=1.0, …`).
 * fetch (optional) replaces the link's fetch, to watch the requests.
 */
export function makeHttpClient(gatewayURL, sdl, { fetch: fetchImpl = fetch } = {}) {
  return new ApolloClient({
    link: new HttpLink({ uri: `${gatewayURL}/graphql`, fetch: fetchImpl }),
    cache: makeCache(sdl),
    incrementalHandler: new Defer20220824Handler(),
  });
}

/**
 * Walks a connection to its end with fetchMore, forwards (first/after)
 * or backwards (last/before), as a "load more" button would. pick(data)
 * returns the connection. Returns the merged edges as the cache reads
 * them and the number of requests made.
 */
export async function walk(client, { query, variables = {}, pick, direction, pageSize, maxPages = 200 }) {
  const forward = direction === 'forward';
  const vars = { ...variables, [forward ? 'first' : 'last']: pageSize };
  const oq = client.watchQuery({ query, variables: vars });
  const sub = oq.subscribe({ error: () => {} });
  try {
    const first = await firstValueFrom(oq.pipe(filter((r) => !r.loading)));
    if (first.error) throw first.error;
    let conn = pick(first.data);
    let pages = 1;
    const pageSizes = [conn.edges.length];
    while (forward ? conn.pageInfo.hasNextPage : conn.pageInfo.hasPreviousPage) {
      if (pages >= maxPages) throw new Error(`still not at the ${forward ? 'end' : 'start'} after ${pages} pages`);
      const more = await oq.fetchMore({
        variables: forward ? { after: conn.pageInfo.endCursor } : { before: conn.pageInfo.startCursor },
      });
      if (more.error) throw more.error;
      pageSizes.push(pick(more.data).edges.length);
      pages++;
      // The list as the cache holds it now: every page merged by the field policy.
      conn = pick(client.readQuery({ query, variables: vars }));
    }
    return { edges: conn.edges, pageInfo: conn.pageInfo, pages, pageSizes };
  } finally {
    sub.unsubscribe();
  }
}

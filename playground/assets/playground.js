/*
 * Bootstrap for the embedded GraphiQL playground.
 *
 * Kept in its own file (not inline in the page) so the page's
 * Content-Security-Policy can use script-src 'self' without 'unsafe-inline'.
 * Its settings come from data-* attributes on #graphiql, written by the Go
 * handler (playground.Handler).
 */
(function () {
  'use strict';

  var root = document.getElementById('graphiql');
  if (!root) {
    return;
  }

  function fail(message) {
    root.textContent = '';
    var p = document.createElement('p');
    p.className = 'playground-message';
    p.textContent = message;
    root.appendChild(p);
  }

  if (typeof window.React === 'undefined' || typeof window.ReactDOM === 'undefined' ||
      typeof window.GraphiQL === 'undefined' || typeof window.graphqlWs === 'undefined') {
    fail('The GraphiQL playground failed to load its scripts.');
    return;
  }

  var endpoint = root.getAttribute('data-endpoint') || '/graphql';
  var defaultQuery = root.getAttribute('data-default-query');
  var title = root.getAttribute('data-title') || document.title;

  // Posts the operation as JSON to the same-origin GraphQL endpoint. Headers
  // typed into GraphiQL's headers editor arrive in opts.headers and may
  // override the defaults (e.g. to add Authorization).
  function postFetcher(params, opts) {
    var headers = {
      'Content-Type': 'application/json',
      'Accept': 'application/graphql-response+json, application/json'
    };
    var extra = opts && opts.headers;
    if (extra) {
      Object.keys(extra).forEach(function (k) {
        headers[k] = extra[k];
      });
    }
    return fetch(endpoint, {
      method: 'POST',
      headers: headers,
      body: JSON.stringify(params),
      credentials: 'same-origin'
    }).then(function (res) {
      return res.text().then(function (text) {
        try {
          return JSON.parse(text);
        } catch (e) {
          throw new Error('HTTP ' + res.status + ' ' + res.statusText +
            ' (response is not JSON): ' + text.slice(0, 500));
        }
      });
    });
  }

  // --- Subscriptions: graphql-transport-ws over a WebSocket ---------------

  // The WebSocket URL of the endpoint: same host and path, ws: for http:
  // and wss: for https: (the page's own scheme when the endpoint is a path).
  var wsURL = (function () {
    var u = new URL(endpoint, window.location.href);
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    u.hash = '';
    return u.href;
  })();

  // The type ('query', 'mutation' or 'subscription') of the operation that
  // will run: the one named operationName, else the document's only one.
  // The document is parsed with the graphql-js that GraphiQL bundles and
  // exposes as GraphiQL.GraphQL (so comments, strings, fragments and several
  // operations are handled as the server will); GraphiQL's own parse of the
  // editor (opts.documentAST) is the fallback. A document that does not
  // parse is sent over HTTP, whose answer explains the syntax error.
  function operationType(params, opts) {
    var doc = null;
    var gql = window.GraphiQL.GraphQL;
    if (gql && typeof gql.parse === 'function') {
      try {
        doc = gql.parse(params.query);
      } catch (e) {
        return 'query';
      }
    } else if (opts && opts.documentAST) {
      doc = opts.documentAST;
    }
    if (!doc) {
      return 'query';
    }
    var ops = doc.definitions.filter(function (d) {
      return d.kind === 'OperationDefinition';
    });
    var op = null;
    if (params.operationName) {
      op = ops.filter(function (d) {
        return d.name && d.name.value === params.operationName;
      })[0];
    } else if (ops.length === 1) {
      op = ops[0];
    }
    return op ? op.operation : 'query';
  }

  // One lazy graphql-ws client per set of headers: the headers editor's
  // object is the connection_init payload (where the gateway reads, say,
  // Authorization), which is fixed for a connection, so new headers mean a
  // new connection. Lazy: the socket opens with the first subscription and
  // closes when none is left.
  var wsClient = null;
  var wsClientHeaders = null;

  function clientFor(headers) {
    var key = JSON.stringify(headers || {});
    if (wsClient && wsClientHeaders === key) {
      return wsClient;
    }
    if (wsClient) {
      wsClient.dispose();
    }
    var payload = JSON.parse(key);
    wsClientHeaders = key;
    wsClient = graphqlWs.createClient({
      url: wsURL,
      lazy: true,
      retryAttempts: 3,
      // Reconnect after a dropped connection (network, server restart),
      // not when the server closed it on purpose (4xxx: forbidden, too many
      // subscriptions, ...): that is shown at once. (Each acknowledged
      // connection resets graphql-ws's retry count, so retrying those would
      // never end.)
      shouldRetry: function (err) {
        return !(err && typeof err.code === 'number' && err.code >= 4000);
      },
      connectionParams: function () {
        return payload;
      }
    });
    return wsClient;
  }

  // What a failed subscription shows in the result pane, as {errors: [...]}:
  // GraphQL errors from the server as they are, a closed or failed socket
  // as a message that says what happened. (Plain objects, not Errors, so
  // GraphiQL shows no stack trace.)
  function wsError(err, url) {
    if (Array.isArray(err)) {
      return err;
    }
    if (err instanceof Error) {
      return { message: err.message };
    }
    if (err && typeof err.code === 'number') { // CloseEvent
      return {
        message: 'WebSocket ' + url + ' closed: ' + err.code +
          (err.reason ? ' ' + err.reason : err.code === 1006 ? ' (connection failed or cut)' : '')
      };
    }
    return { message: 'WebSocket connection to ' + url + ' failed' };
  }

  // Runs a subscription; returns the Observable-like object GraphiQL
  // accepts from a fetcher ({subscribe(observer)} returning
  // {unsubscribe()}): each event replaces the result pane as it arrives,
  // and GraphiQL's stop button unsubscribes (graphql-ws sends complete).
  function subscribe(params, opts) {
    var client = clientFor(opts && opts.headers);
    var request = { query: params.query };
    if (params.variables) {
      request.variables = params.variables;
    }
    if (params.operationName) {
      request.operationName = params.operationName;
    }
    return {
      subscribe: function (observer) {
        var dispose = client.subscribe(request, {
          next: function (result) {
            observer.next(result);
          },
          error: function (err) {
            observer.error(wsError(err, wsURL));
          },
          complete: function () {
            observer.complete();
          }
        });
        return { unsubscribe: dispose };
      }
    };
  }

  // GraphiQL's fetcher: subscriptions over the WebSocket, queries and
  // mutations POSTed.
  function fetcher(params, opts) {
    if (operationType(params, opts) === 'subscription') {
      return subscribe(params, opts);
    }
    return postFetcher(params, opts);
  }

  var props = {
    fetcher: fetcher,
    isHeadersEditorEnabled: true,
    shouldPersistHeaders: false
  };
  if (defaultQuery !== null) {
    props.defaultQuery = defaultQuery;
  }

  var e = React.createElement;
  ReactDOM.createRoot(root).render(
    e(GraphiQL, props, e(GraphiQL.Logo, null, title))
  );
})();

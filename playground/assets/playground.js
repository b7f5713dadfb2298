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
      typeof window.GraphiQL === 'undefined') {
    fail('The GraphiQL playground failed to load its scripts.');
    return;
  }

  var endpoint = root.getAttribute('data-endpoint') || '/graphql';
  var defaultQuery = root.getAttribute('data-default-query');
  var title = root.getAttribute('data-title') || document.title;

  // Posts the operation as JSON to the same-origin GraphQL endpoint. Headers
  // typed into GraphiQL's headers editor arrive in opts.headers and may
  // override the defaults (e.g. to add Authorization).
  function fetcher(params, opts) {
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

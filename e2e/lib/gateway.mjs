// Gateways of a test's own: the binary scripts/check-e2e.sh built
// (E2E_GATEWAY_BIN), started with the test's flags over the same sample
// data service as the gateway under test, on a loopback port.
import { spawn } from 'node:child_process';
import { upstreamURL } from './env.mjs';

/** The gateway binary, or undefined when the checks did not build one (a test then skips). */
export const gatewayBin = () => process.env.E2E_GATEWAY_BIN;

/**
 * Starts the gateway binary with args (after the upstream flags); resolves
 * once it serves, with its URL, its log so far and stop(). Rejects when it
 * exits first (its log in the error), or is not serving within 60 s.
 */
export function startGateway(args) {
  const upstream = upstreamURL();
  const child = spawn(gatewayBin(), ['-listen', '127.0.0.1:0', '-upstream', upstream, '-explorer', `${upstream}/rest`, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the gateway did not serve within 60 s:\n${log}`));
    }, 60_000);
    const read = (chunk) => {
      log += chunk;
      const m = /msg="gateway serving" addr=(127\.0\.0\.1:\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ url: `http://${m[1]}`, log: () => log, stop });
      }
    };
    child.stdout.setEncoding('utf8').on('data', read);
    child.stderr.setEncoding('utf8').on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (${code}) before serving:\n${log}`));
    });
  });
}

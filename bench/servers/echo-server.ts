/**
 * The reference: a bare uWebSockets.js server that reads the POST body (copying it, as txgate
 * does) and answers a small fixed JSON-RPC result. Usage: node echo-server.js PORT
 */
import { uws } from '../../src/base/native.js';
import { onBody } from './uws-body.js';

const port = Number(process.argv[2] ?? 18100);
const BODY = '{"jsonrpc":"2.0","id":1,"result":"0x1237"}';
uws()
  .App()
  .post('/*', (res) =>
    onBody(res, () =>
      res.cork(() => {
        res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(BODY);
      }),
    ),
  )
  .listen('127.0.0.1', port, (s) => {
    if (s === false) process.exit(1);
    process.stdout.write('ready\n');
  });

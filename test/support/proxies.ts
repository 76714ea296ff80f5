/**
 * Real proxies on 127.0.0.1 for the proxy tests (node:net only, no library shared with the
 * code under test): a SOCKS5 server (RFC 1928, "no authentication" and RFC 1929
 * username/password, CONNECT only) and an HTTP CONNECT server. Each counts the connections
 * it carried and the targets asked for; host names in `hosts` resolve to the address given
 * (so a test can name an API server that does not resolve on this machine, as a bastion's
 * private DNS does), any other name is refused.
 */
import net from 'node:net';

export interface TestProxy {
  url: string;
  port: number;
  /** "host:port" as each client asked for it, one per carried connection. */
  targets: string[];
  /** SOCKS5 username:password or Proxy-Authorization values seen, in order. */
  auth: string[];
  close(): Promise<void>;
}

interface ProxyOptions {
  hosts?: Record<string, string>;
  /** HTTP CONNECT: answer every CONNECT with this status instead of tunnelling. */
  refuse?: number;
}

function pipeTo(client: net.Socket, host: string, port: number, sockets: Set<net.Socket>, opened: () => void, failed: () => void): void {
  const upstream = net.connect(port, host, opened);
  sockets.add(upstream);
  upstream.once('connect', () => {
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', () => {
    failed();
    client.destroy();
  });
  upstream.on('close', () => {
    sockets.delete(upstream);
    client.destroy();
  });
  client.on('error', () => upstream.destroy());
  client.on('close', () => upstream.destroy());
}

async function listen(server: net.Server, sockets: Set<net.Socket>, scheme: string, p: Omit<TestProxy, 'url' | 'port' | 'close'>): Promise<TestProxy> {
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    ...p,
    port,
    url: `${scheme}://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const resolveIn = (hosts: Record<string, string>, host: string): string | null => (net.isIP(host) ? host : (hosts[host.toLowerCase()] ?? null));

/** A SOCKS5 proxy: method 0x02 when the client offers it (the credentials recorded), else 0x00, command CONNECT, IPv4 / domain / IPv6 targets. */
export async function socks5Proxy(o: ProxyOptions = {}): Promise<TestProxy> {
  const sockets = new Set<net.Socket>();
  const p = { targets: [] as string[], auth: [] as string[] };
  const server = net.createServer((c) => {
    let buf = Buffer.alloc(0);
    let stage: 'greeting' | 'auth' | 'request' | 'done' = 'greeting';
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (stage === 'greeting') {
          if (buf.length < 2 || buf.length < 2 + buf[1]) return;
          const methods = [...buf.subarray(2, 2 + buf[1])];
          buf = buf.subarray(2 + buf[1]);
          const method = methods.includes(2) ? 2 : methods.includes(0) ? 0 : 0xff;
          c.write(Buffer.from([5, method]));
          if (method === 0xff) return void c.end();
          stage = method === 2 ? 'auth' : 'request';
        } else if (stage === 'auth') {
          if (buf.length < 2 || buf.length < 3 + buf[1] || buf.length < 3 + buf[1] + buf[2 + buf[1]]) return;
          const ulen = buf[1];
          const plen = buf[2 + ulen];
          p.auth.push(`${buf.subarray(2, 2 + ulen).toString()}:${buf.subarray(3 + ulen, 3 + ulen + plen).toString()}`);
          buf = buf.subarray(3 + ulen + plen);
          c.write(Buffer.from([1, 0]));
          stage = 'request';
        } else if (stage === 'request') {
          if (buf.length < 5) return;
          const atyp = buf[3];
          const addrLen = atyp === 1 ? 4 : atyp === 4 ? 16 : atyp === 3 ? 1 + buf[4] : -1;
          if (addrLen < 0) return void c.destroy();
          if (buf.length < 4 + addrLen + 2) return;
          const raw = buf.subarray(4, 4 + addrLen);
          const host =
            atyp === 1
              ? [...raw].join('.')
              : atyp === 3
                ? raw.subarray(1).toString()
                : (raw.toString('hex').match(/.{4}/g) ?? []).map((g) => g.replace(/^0+(?=.)/, '')).join(':');
          const port = buf.readUInt16BE(4 + addrLen);
          const rest = buf.subarray(4 + addrLen + 2);
          stage = 'done';
          c.off('data', onData);
          const reply = (code: number) => Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
          const address = resolveIn(o.hosts ?? {}, host);
          if (buf[1] !== 1 || address === null) return void c.end(reply(address === null ? 4 : 7));
          p.targets.push(`${host}:${port}`);
          c.pause();
          pipeTo(
            c,
            address,
            port,
            sockets,
            () => {
              c.write(reply(0));
              if (rest.length) c.unshift(rest);
              c.resume();
            },
            () => c.end(reply(5)),
          );
          return;
        } else return;
      }
    };
    c.on('data', onData);
    c.on('error', () => c.destroy());
  });
  return listen(server, sockets, 'socks5', p);
}

/** An HTTP proxy that only tunnels (CONNECT host:port); any other request is 405. */
export async function connectProxy(o: ProxyOptions = {}): Promise<TestProxy> {
  const sockets = new Set<net.Socket>();
  const p = { targets: [] as string[], auth: [] as string[] };
  const server = net.createServer((c) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return void (buf.length > 16384 && c.destroy());
      c.off('data', onData);
      const [line, ...headers] = buf.subarray(0, end).toString('latin1').split('\r\n');
      const rest = buf.subarray(end + 4);
      const m = /^CONNECT (\S+):(\d+) HTTP\/1\.[01]$/.exec(line);
      if (!m) return void c.end('HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n');
      const auth = headers.find((h) => /^proxy-authorization:/i.test(h));
      if (auth) p.auth.push(auth.replace(/^[^:]*:\s*/, ''));
      if (o.refuse) return void c.end(`HTTP/1.1 ${o.refuse} Refused\r\nContent-Length: 0\r\n\r\n`);
      const host = m[1].replace(/^\[|\]$/g, '');
      const address = resolveIn(o.hosts ?? {}, host);
      if (address === null) return void c.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
      p.targets.push(`${m[1]}:${m[2]}`);
      c.pause();
      pipeTo(
        c,
        address,
        Number(m[2]),
        sockets,
        () => {
          c.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (rest.length) c.unshift(rest);
          c.resume();
        },
        () => c.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n'),
      );
    };
    c.on('data', onData);
    c.on('error', () => c.destroy());
  });
  return listen(server, sockets, 'http', p);
}

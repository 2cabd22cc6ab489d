// A test server for NVIDIA dcgm-exporter (github.com/NVIDIA/dcgm-exporter): its /metrics page as the exporter renders
// it (internal/pkg/rendermetrics/render_metrics.go: HELP and TYPE per field, one series per GPU labelled gpu, UUID,
// pci_bus_id, device, modelName, Hostname, then the driver-version label and the Kubernetes pod attributes), from the
// recorded page test/fixtures/dcgm-exporter-2gpu.prom (2 GPUs, the fields of etc/default-counters.csv). The values that
// matter change in a known way: each GPU draws a constant power, and its energy counter
// (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, mJ since boot) grows by exactly that power times the server's elapsed time, so
// a test knows the energy between any two pages it served. It can go down mid-run (the exporter's pod gone) and serve
// nonsense values (a negative power, a NaN utilisation).
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { repoPath } from './repo.js';

/** Options of {@link startDcgmExporter}. */
export interface DcgmExporterOptions {
  /** Each GPU's constant power draw, W. */
  powerW: number;
  /** DCGM_FI_DEV_GPU_UTIL of GPU 0 and GPU 1, %. @default [80, 40] */
  utilPct?: readonly [number, number];
  /** Keep DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION on the page (it is in the default counters). @default true */
  energyCounter?: boolean;
  /** Serve this many pages, then go down: the connection is cut and the port refuses from then on. */
  downAfter?: number;
  /** On every third page GPU 1 shows a negative power and a NaN utilisation (nonsense the reader must skip). */
  nonsense?: boolean;
  /** The Hostname label's value, in place of the recorded `gpu-node-a` (raw: a hostile value is the point). */
  hostname?: string;
}

/** One page served: when (server clock, ms) and each GPU's energy counter on it. */
export interface ServedPage {
  atMs: number;
  energyMj: [number, number];
}

/** A running exporter. */
export interface DcgmExporter {
  /** The page's URL, e.g. http://127.0.0.1:PORT/metrics. */
  url: string;
  /** Every page served, in order. */
  served: ServedPage[];
  close(): Promise<void>;
}

const FIXTURE = repoPath('test', 'fixtures', 'dcgm-exporter-2gpu.prom');

/** The fixture with GPU `gpu`'s value of `field` replaced. */
function setValue(page: string, field: string, gpu: number, value: string): string {
  return page.replace(new RegExp(`^(${field}\\{gpu="${gpu}",[^\\n]*\\}) [^\\n]*$`, 'm'), `$1 ${value}`);
}

/** Drops a field from the page: its HELP, TYPE and series lines. */
function dropField(page: string, field: string): string {
  return page
    .split('\n')
    .filter((line) => !line.startsWith(`${field}{`) && !line.startsWith(`# HELP ${field} `) && !line.startsWith(`# TYPE ${field} `))
    .join('\n');
}

/** Starts the exporter on 127.0.0.1 (a free port). */
export async function startDcgmExporter(options: DcgmExporterOptions): Promise<DcgmExporter> {
  const fixture = readFileSync(FIXTURE, 'utf8');
  const recorded = options.hostname === undefined ? fixture : fixture.replaceAll('Hostname="gpu-node-a"', `Hostname="${options.hostname}"`);
  // The counters' values on the recorded page: where each GPU's energy starts.
  const base = [0, 1].map((gpu) => Number(new RegExp(`^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\\{gpu="${gpu}",.*\\} (\\d+)$`, 'm').exec(recorded)![1])) as [number, number];
  const util = options.utilPct ?? [80, 40];
  const startMs = performance.now();
  const served: ServedPage[] = [];
  const sockets = new Set<Socket>();
  let down = false;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics' || down) {
      res.writeHead(404).end();
      return;
    }
    if (options.downAfter !== undefined && served.length >= options.downAfter) {
      // The exporter is gone: this connection is cut, and the port refuses new ones.
      down = true;
      server.close();
      for (const socket of sockets) socket.destroy();
      return;
    }
    const atMs = performance.now();
    const energyMj = base.map((b) => b + Math.round(options.powerW * (atMs - startMs))) as [number, number];
    served.push({ atMs, energyMj });
    let page = recorded;
    for (const gpu of [0, 1]) {
      page = setValue(page, 'DCGM_FI_DEV_POWER_USAGE', gpu, options.powerW.toFixed(6));
      page = setValue(page, 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', gpu, String(energyMj[gpu]));
      page = setValue(page, 'DCGM_FI_DEV_GPU_UTIL', gpu, String(util[gpu]));
    }
    if (options.nonsense === true && served.length % 3 === 2) {
      page = setValue(page, 'DCGM_FI_DEV_POWER_USAGE', 1, '-12.000000');
      page = setValue(page, 'DCGM_FI_DEV_GPU_UTIL', 1, 'NaN');
    }
    if (options.energyCounter === false) page = dropField(page, 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION');
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(page);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    served,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

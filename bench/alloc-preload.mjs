// Loaded with `node --import` by bench/allocation-sites.ts: samples every allocation of the process from its start,
// objects the collectors freed included, and writes the profile at exit to $ALLOC_PROFILE (a V8 sampling heap
// profile, as DevTools reads it). The in-process inspector answers `post` synchronously, so the 'exit' handler can.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.ALLOC_PROFILE;
if (out !== undefined) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.enable');
  session.post('HeapProfiler.startSampling', { samplingInterval: Number(process.env.ALLOC_INTERVAL ?? 4096), includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  process.on('exit', () => {
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error === null) writeFileSync(out, JSON.stringify(result.profile));
    });
  });
}

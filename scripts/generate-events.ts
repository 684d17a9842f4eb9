/** `npm run events`: writes events/<function-id>.json from scripts/event-samples.ts, removing the files of no function. */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { eventFileContent, sampleEvents } from './event-samples';

const EVENTS_DIR = resolve(import.meta.dirname, '..', 'events');

mkdirSync(EVENTS_DIR, { recursive: true });
const events = sampleEvents();
for (const file of readdirSync(EVENTS_DIR)) {
  if (file.endsWith('.json') && !(file.slice(0, -'.json'.length) in events)) rmSync(resolve(EVENTS_DIR, file));
}
for (const [id, event] of Object.entries(events)) writeFileSync(resolve(EVENTS_DIR, `${id}.json`), eventFileContent(event));
console.log(`Wrote ${Object.keys(events).length} sample events to events/`);

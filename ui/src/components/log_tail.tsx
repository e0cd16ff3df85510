// A live tail of log records (GET /api/v1/logs/tail, Server-Sent Events):
// new records on top as they are acknowledged, a pause that holds them
// (bounded, lib/tail_buffer.ts) with their count, and resume. The browser's
// EventSource reconnects by itself with Last-Event-ID, so a dropped
// connection resumes where it stopped while the server still can.

import { useEffect, useRef, useState } from 'preact/hooks';
import { LogTable } from './log_table';
import type { LogRecord } from '../lib/api';
import { TailBuffer } from '../lib/tail_buffer';

export function LogTail(props: { filters: string; formatTime: (nanos: string) => string }) {
  const buffer = useRef(new TailBuffer<LogRecord>());
  const [, setVersion] = useState(0);
  const [state, setState] = useState<'connecting' | 'live' | 'reconnecting' | 'closed'>('connecting');
  const [notice, setNotice] = useState<string | null>(null);
  const redraw = () => setVersion((v) => v + 1);

  useEffect(() => {
    const tail = buffer.current;
    tail.clear();
    if (tail.paused) tail.resume();
    setState('connecting');
    setNotice(null);
    redraw();
    const source = new EventSource(`/api/v1/logs/tail${props.filters ? `?${props.filters}` : ''}`);
    // Records of a burst are shown in one render, on the next frame.
    let arrived: LogRecord[] = [];
    let frame = 0;
    source.onopen = () => setState('live');
    source.onmessage = (event) => {
      arrived.push(JSON.parse(event.data) as LogRecord);
      if (frame !== 0) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        tail.addAll(arrived);
        arrived = [];
        redraw();
      });
    };
    source.addEventListener('missed', (event) => {
      tail.missed += Number(JSON.parse((event as MessageEvent).data).count) || 0;
      redraw();
    });
    source.addEventListener('reset', (event) => {
      setNotice(`The tail started again from the newest records: ${JSON.parse((event as MessageEvent).data).reason}`);
    });
    source.addEventListener('end', (event) => {
      setNotice(`The server ended the tail: ${JSON.parse((event as MessageEvent).data).reason}`);
      source.close();
      setState('closed');
    });
    source.onerror = () => setState(source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting');
    return () => {
      source.close();
      if (frame !== 0) cancelAnimationFrame(frame);
    };
  }, [props.filters]);

  const tail = buffer.current;
  const status =
    state === 'connecting' ? 'Connecting…'
      : state === 'reconnecting' ? 'Connection lost; reconnecting…'
        : state === 'closed' ? 'The tail has stopped. Turn Live tail off and on to start it again.'
          : tail.paused ? `Paused: ${tail.waiting.toLocaleString('en-US')} new records waiting`
            : 'Live: new records appear on top';
  return (
    <>
      <div class="tail-bar">
        <p role="status" class={state === 'live' && !tail.paused ? 'live' : ''}>
          {status}
        </p>
        <button
          type="button"
          disabled={state === 'closed'}
          onClick={() => {
            if (tail.paused) tail.resume();
            else tail.pause();
            redraw();
          }}
        >
          {tail.paused ? 'Resume' : 'Pause'}
        </button>
        <span>{tail.shown.length.toLocaleString('en-US')} records shown</span>
        {tail.missed > 0 && (
          <span class="error">{tail.missed.toLocaleString('en-US')} records skipped by the server (this page read too slowly)</span>
        )}
      </div>
      {notice && <p class="hint">{notice}</p>}
      {tail.shown.length === 0 ? (
        <p class="hint">Waiting for new records that match the filters…</p>
      ) : (
        <LogTable records={tail.shown} formatTime={props.formatTime} />
      )}
    </>
  );
}

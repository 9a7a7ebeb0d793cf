import { describe, expect, it } from 'vitest';
import { joinWindows, transcribeRetryDelaySeconds } from '../src/transcripts/transcribe-recording.ts';
import { transcriptText, vttTime, webVtt } from '../src/transcripts/transcripts.ts';

describe('captions of a transcript', () => {
  it('writes times as WebVTT cue timings', () => {
    expect(vttTime(0)).toBe('00:00:00.000');
    expect(vttTime(1.2345)).toBe('00:00:01.235');
    expect(vttTime(3723.5)).toBe('01:02:03.500');
    expect(vttTime(-1)).toBe('00:00:00.000');
  });

  it('writes a cue a segment, its text as text: markup and arrows escaped, blank lines dropped', () => {
    expect(
      webVtt([
        { start: 0, end: 2.5, text: ' Hello & welcome ' },
        { start: 2.5, end: 4, text: '<b>not bold</b> --> on\n\n  two lines ' },
        { start: 4, end: 5, text: '   ' },
        { start: 6, end: 5, text: 'ends before it starts' },
      ]),
    ).toBe(
      'WEBVTT\n\n' +
        '00:00:00.000 --> 00:00:02.500\nHello &amp; welcome\n\n' +
        '00:00:02.500 --> 00:00:04.000\n&lt;b&gt;not bold&lt;/b&gt; --&gt; on\ntwo lines\n\n',
    );
    expect(webVtt([])).toBe('WEBVTT\n\n');
  });

  it("joins the segments' text into the transcript's", () => {
    expect(
      transcriptText([
        { start: 0, end: 1, text: ' One. ' },
        { start: 1, end: 2, text: '' },
        { start: 2, end: 3, text: 'Two.' },
      ]),
    ).toBe('One. Two.');
  });
});

describe('windows of a long recording, joined', () => {
  const heard = (offsetSeconds: number, overlapSeconds: number, segments: [number, number, string][]) => ({
    offsetSeconds,
    overlapSeconds,
    transcript: {
      language: offsetSeconds === 0 ? null : 'en',
      text: '',
      segments: segments.map(([start, end, text]) => ({ start, end, text })),
    },
  });

  it('moves each window to the recording’s time and keeps each overlap’s words once, cut at its middle', () => {
    // Windows of 10 s from 0 and from 8 s: they share 8–10 s, cut at 9 s.
    const joined = joinWindows([
      heard(0, 0, [
        [0, 4, 'one'],
        [4, 8.5, 'two'],
        [9.2, 10, 'three, cut'],
      ]),
      heard(8, 2, [
        [0, 0.5, 'two, again'],
        [1.1, 2, 'three'],
        [2, 6, 'four'],
      ]),
    ]);
    expect(joined).toEqual({
      language: 'en',
      text: 'one two three four',
      segments: [
        { start: 0, end: 4, text: 'one' },
        { start: 4, end: 8.5, text: 'two' },
        { start: 9.1, end: 10, text: 'three' },
        { start: 10, end: 14, text: 'four' },
      ],
    });
  });

  it('gives a window alone as it is', () => {
    expect(joinWindows([heard(0, 0, [[0.5, 1, 'hi']])]).segments).toEqual([{ start: 0.5, end: 1, text: 'hi' }]);
  });
});

describe('the retry schedule', () => {
  it('tries six times over about three hours, each wait within a fifth of its step', () => {
    const waits = [1, 2, 3, 4, 5, 6].map((n) => transcribeRetryDelaySeconds(n, 0.5));
    expect(waits).toEqual([30, 120, 600, 1800, 7200, null]);
    expect(transcribeRetryDelaySeconds(1, 0)).toBe(24);
    expect(transcribeRetryDelaySeconds(1, 1)).toBeCloseTo(36);
  });
});

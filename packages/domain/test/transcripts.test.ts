import { describe, expect, it } from 'vitest';
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

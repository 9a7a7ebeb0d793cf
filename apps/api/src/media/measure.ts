import { bareMimeType, type ProbeOutcome } from '@convo/domain';
import { ALL_FORMATS, CustomSource, EncodedPacketSink, Input, type InputTrack } from 'mediabunny';

/*
 * What the probe does with the bytes, wherever it runs (probe-worker.ts): mediabunny, a demuxer
 * written in TypeScript, reads only what it needs through `read`, with a bounded cache; the
 * duration is computed from the packets' own timestamps, which is what a browser's MediaRecorder
 * WebM (no duration written at all) and Safari's fragmented MP4 need.
 */

/** Bytes the demuxer may keep cached while probing one recording. */
const CACHE_BYTES = 4 * 1024 * 1024;

export const INCOMPLETE = 'That recording is incomplete (it was cut off while being sent).';
export const REFUSED = 'That file is not a recording this site can play (WebM, MP4, Ogg, MP3, M4A or WAV).';

/**
 * Measures `size` bytes that `read(start, end)` gives ([start, end), as mediabunny asks). No frame
 * past `maxSeconds` (the longest recording accepted) and a second is scanned: a recording that has
 * one there is answered with that frame's end, which is all the site needs to refuse it (a file
 * of tiny frames, built to keep the demuxer scanning, stops there too).
 */
export async function measure(
  size: number,
  read: (start: number, end: number) => Promise<Uint8Array>,
  maxSeconds: number,
): Promise<ProbeOutcome> {
  if (size === 0) return { ok: false, problem: 'That recording is empty.' };
  const input = new Input({
    formats: ALL_FORMATS,
    source: new CustomSource({ getSize: () => size, read, maxCacheSize: CACHE_BYTES, prefetchProfile: 'fileSystem' }),
  });
  try {
    if (!(await input.canRead())) return { ok: false, problem: REFUSED };
    const [video, audio] = await Promise.all([input.getPrimaryVideoTrack(), input.getPrimaryAudioTrack()]);
    if (!video && !audio) return { ok: false, problem: REFUSED };
    const contentType = containerType(bareMimeType(await input.getMimeType()), video !== null);
    const past = await pastLimit([video, audio], maxSeconds);
    if (past !== null) return { ok: true, media: { contentType, hasVideo: video !== null, seconds: past } };
    const seconds = await input.computeDuration();
    // A recording cut short: what its header promised and what its packets reach disagree, or a
    // track's last packet (as its index says) is not all there.
    const promised = await input.getDurationFromMetadata();
    const lastPackets = await Promise.all(
      [video, audio].flatMap((track) => (track ? [new EncodedPacketSink(track).getPacket(Infinity)] : [])),
    );
    if ((promised !== null && promised - seconds > Math.max(1, promised * 0.1)) || lastPackets.includes(null)) {
      return { ok: false, problem: INCOMPLETE };
    }
    return { ok: true, media: { contentType, hasVideo: video !== null, seconds } };
  } catch {
    // Whatever the demuxer trips on in bytes it cannot read is the same answer: not a recording.
    return { ok: false, problem: REFUSED };
  } finally {
    input.dispose();
  }
}

/**
 * Where a track goes past `maxSeconds` and half a second (the site's limit), at least, when it
 * does: the end of its last frame that starts by a second past the limit. Only the frames up to
 * there are read; a track whose frames are too sparse to tell so early says nothing here.
 */
async function pastLimit(tracks: (InputTrack | null)[], maxSeconds: number): Promise<number | null> {
  for (const track of tracks) {
    if (!track) continue;
    const packet = await new EncodedPacketSink(track).getPacket(maxSeconds + 1, { metadataOnly: true });
    if (packet && packet.timestamp > maxSeconds + 0.5) return packet.timestamp + packet.duration;
  }
  return null;
}

/** The type a recording is served as: mediabunny names WebM and MP4 with audio only as video/*. */
function containerType(type: string, hasVideo: boolean): string {
  if (hasVideo) return type;
  if (type === 'video/webm') return 'audio/webm';
  if (type === 'video/mp4') return 'audio/mp4';
  return type;
}

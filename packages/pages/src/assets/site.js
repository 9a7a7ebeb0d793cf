// The site's one script, of its own origin (the CSP allows no other). Pages work without it: it
// shows times in the reader's own time zone ("2 hours ago" while recent; the exact local time on
// hover), tells a page that frames an embed how tall the embed is, records replies, reports the
// plays of recordings (receipts), and keeps a conversation, its embed and the team's inbox up to
// date as they change.

/** Times under `root` in the reader's own time zone. */
function showLocalTimes(root) {
  const now = Date.now();
  const exact = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeStyle: 'short' });
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const steps = [
    [60, 1, 'second'],
    [3600, 60, 'minute'],
    [86400, 3600, 'hour'],
    [604800, 86400, 'day'],
  ];
  for (const time of root.querySelectorAll('time[datetime]')) {
    const at = new Date(time.getAttribute('datetime'));
    if (Number.isNaN(at.getTime())) continue;
    const local = exact.format(at);
    const seconds = Math.round((at.getTime() - now) / 1000);
    const step = steps.find(([limit]) => Math.abs(seconds) < limit);
    time.title = local;
    time.textContent = step ? relative.format(Math.round(seconds / step[1]), step[2]) : local;
  }
}

/**
 * Played receipts (docs/pages.md, "Played receipts"): each player under `root` that reports its
 * play (`data-play`) does so once, as soon as it has played `data-play-after` seconds (skipped-over
 * time does not count) or reached its end: a small same-origin POST, with the ticket the page gave
 * it (`data-ticket`) in its address and no body, sent while it plays (a page that closes often
 * loses its last request).
 */
function watchPlays(root) {
  for (const figure of root.querySelectorAll('figure[data-play]')) {
    const player = figure.querySelector('video, audio');
    if (!player || figure.dataset.watched) continue;
    figure.dataset.watched = '1';
    const after = Number(figure.dataset.playAfter) || 5;
    let played = 0;
    let last = null;
    let sent = false;
    const report = () => {
      if (sent) return;
      sent = true;
      const ticket = new URLSearchParams({ ticket: figure.dataset.ticket || '' });
      fetch(`${figure.dataset.play}?${ticket}`, {
        method: 'POST',
        credentials: 'same-origin',
        keepalive: true,
      }).catch(() => {
        sent = false;
      });
    };
    player.addEventListener('timeupdate', () => {
      const now = player.currentTime;
      // Only time that played: a jump (a seek) is no watching.
      if (last !== null && !player.paused && !player.seeking && now > last && now - last < 2) played += now - last;
      last = now;
      if (played >= after) report();
    });
    player.addEventListener('seeking', () => {
      last = null;
    });
    player.addEventListener('ended', report);
  }
}

/** A recording's player: the one in the message `id` names (`message-<id>`). */
const playerOf = (id) => document.getElementById(id)?.querySelector('video, audio') ?? null;

/** "1:23" from seconds, as the page writes a moment. */
const clock = (seconds) => {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
};

/**
 * Comments at a moment: each list of moments under a recording becomes marks along a timeline
 * (placed by their share of its length), and every moment link seeks its recording's player there
 * and plays it (without JavaScript, the links lead to the replies and the recording).
 */
function showMoments(root) {
  for (const ol of root.querySelectorAll('ol.moments:not(.timeline)')) {
    const length = Number(ol.dataset.length);
    if (!(length > 0)) continue;
    ol.classList.add('timeline');
    for (const li of ol.children) {
      li.style.left = `${Math.min(100, (Number(li.dataset.at) / length) * 100)}%`;
    }
  }
}

document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[data-seek]') : null;
  const player = link ? playerOf(link.dataset.player) : null;
  if (!link || !player) return;
  event.preventDefault();
  player.currentTime = Number(link.dataset.seek) || 0;
  player.scrollIntoView({ block: 'nearest' });
  player.play().catch(() => {});
});

/**
 * Reactions (docs/pages.md, "Reactions"): `fresh` (the reactions as the server now answers them, a
 * form or a list; empty: none) takes the place of those shown under message `id`, with the focus
 * on the same button (or, `focus`, where it says).
 */
function showReactions(id, fresh, focus = null) {
  const article = document.getElementById(`message-${id}`);
  if (!article) return;
  const shown = document.getElementById(`reactions-${id}`);
  const focused = shown?.contains(document.activeElement) ? document.activeElement : null;
  const t = document.createElement('template');
  t.innerHTML = fresh.trim();
  const now = t.content.firstElementChild;
  if (!now) {
    shown?.remove();
    return;
  }
  if (shown) shown.replaceWith(now);
  else {
    const actions = article.querySelector(':scope > .message-actions');
    if (actions) actions.before(now);
    else article.append(now);
  }
  if (focus) now.querySelector(focus)?.focus();
  else if (focused instanceof HTMLButtonElement) {
    const inSet = focused.closest('.picker') ? '.picker ' : '.reaction-list ';
    (now.querySelector(`${inSet}button[value="${focused.value}"]`) ?? now.querySelector('button, a'))?.focus();
  }
}

/** A message's reactions as the server answers them now (`picker`: with the set opened in place). */
async function freshReactions(form, picker) {
  const at = new URL(form.action, location.href);
  at.searchParams.set('fragment', '1');
  if (picker) at.searchParams.set('picker', 'inline');
  const res = await fetch(at, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
  return res.ok ? res.text() : null;
}

// "React" opens the set in place ("Done" closes it); without JavaScript it is a page of its own.
document.addEventListener('click', async (event) => {
  const target = event.target instanceof Element ? event.target : null;
  const opener = target?.closest('form.reactions a.react-link');
  const done = target?.closest('form.reactions .react-done');
  const form = (opener ?? done)?.closest('form.reactions');
  if (!form) return;
  event.preventDefault();
  const id = form.id.replace('reactions-', '');
  const fresh = await freshReactions(form, Boolean(opener));
  if (fresh === null) {
    if (opener) location.assign(opener.href);
    return;
  }
  showReactions(id, fresh, opener ? '.picker button' : 'a.react-link');
});

// A reaction's button posts its form in place (the page comes back whole without JavaScript).
document.addEventListener('submit', async (event) => {
  const form = event.target instanceof HTMLFormElement && event.target.matches('form.reactions') ? event.target : null;
  if (!form) return;
  event.preventDefault();
  const body = new URLSearchParams(new FormData(form, event.submitter));
  body.set('fragment', '1');
  const id = form.id.replace('reactions-', '');
  try {
    const res = await fetch(form.action, { method: 'POST', body, credentials: 'same-origin' });
    const text = await res.text();
    if (res.ok) {
      showReactions(id, text);
      return;
    }
    // Why not, as the site's page says it (too many at once, signed out, gone).
    const page = new DOMParser().parseFromString(text, 'text/html');
    const why =
      page.querySelector('main p')?.textContent?.trim() || 'That did not work: reload the page and try again.';
    let note = form.querySelector('.problem');
    if (!note) {
      note = document.createElement('p');
      note.className = 'problem';
      note.setAttribute('role', 'alert');
      form.append(note);
    }
    note.textContent = why;
  } catch {
    form.submit();
  }
});

(() => {
  showLocalTimes(document);
  watchPlays(document);
  showMoments(document);

  // The reply form's "At": the player's time, in one click.
  for (const button of document.querySelectorAll('button[data-moment-now]')) {
    const player = playerOf(button.dataset.momentNow);
    const field = document.getElementById('reply-at');
    if (!player || !field) continue;
    button.hidden = false;
    button.addEventListener('click', () => {
      field.value = clock(player.currentTime);
      field.focus();
    });
  }

  // A start's landing in a frame has taken its one-time code: the address forgets it.
  const address = new URL(location.href);
  if (address.searchParams.has('code')) {
    address.searchParams.delete('code');
    history.replaceState(history.state, '', address.pathname + address.search + address.hash);
  }

  // An embed tells the page around it its height: {type: 'convo:height', height} (see docs/pages.md),
  // and nothing else: not its address, which is the frame's own business.
  if (document.body.classList.contains('embed') && window.parent !== window) {
    let last = 0;
    const tell = () => {
      const height = Math.ceil(document.documentElement.scrollHeight);
      if (height === last) return;
      last = height;
      window.parent.postMessage({ type: 'convo:height', height }, '*');
    };
    tell();
    new ResizeObserver(tell).observe(document.documentElement);
  }
})();

// The reply form's recorder: with JavaScript, "Record video", "Record screen" and "Record audio"
// (getUserMedia, getDisplayMedia, MediaRecorder). First a live preview with a choice of camera and
// microphone (and, over a screen, the camera in a bubble, drawn on a canvas where the browser can),
// then "Start recording" and a 3-2-1 countdown; while recording, the elapsed time against the
// limit, pause and stop; then play back or record again. The recording is sent while it is made, as a resumable tus
// upload (tus-js-client, loaded when someone records) that picks up after a dropped connection
// from where the server stopped; the form then names the finished upload (`upload`). It is also
// put into the form's own file input, so if the upload cannot be made the form posts it as it
// posts a chosen file. Either way the server measures it, whatever this script says. Without a
// device or permission the text reply and the file input still work.
(() => {
  const form = document.querySelector('form.reply');
  const input = form?.querySelector('input[type=file][name=media]');
  if (!form || !input || typeof MediaRecorder === 'undefined' || !navigator.mediaDevices) return;
  const maxSeconds = Number(form.dataset.maxSeconds) || 600;
  const bare = (type) => type.split(';')[0].trim().toLowerCase();
  // MP4 with H.264 where the browser records it (every browser plays that, Safari included: a VP9
  // recording in MP4 plays nowhere on Apple's devices), then MP4 as it comes, else WebM, else
  // what it offers.
  const CANDIDATES = {
    video: [
      'video/mp4;codecs=avc1.42E01E,mp4a.40.2',
      'video/mp4;codecs=avc1,opus',
      'video/mp4;codecs=avc1',
      'video/mp4',
      'video/webm;codecs=vp8,opus',
      'video/webm',
    ],
    audio: ['audio/mp4', 'audio/webm;codecs=opus', 'audio/webm', 'audio/ogg;codecs=opus'],
  };
  const EXTENSIONS = {
    'video/mp4': 'mp4',
    'video/webm': 'webm',
    'audio/mp4': 'm4a',
    'audio/webm': 'webm',
    'audio/ogg': 'ogg',
  };
  const clock = (s) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
  const el = (tag, props = {}) => Object.assign(document.createElement(tag), props);

  const box = el('div', { className: 'recorder' });
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', 'Record a message');
  const starts = [
    ['video', 'Record video'],
    ['screen', 'Record screen'],
    ['audio', 'Record audio'],
  ]
    .filter(([kind]) => kind !== 'screen' || typeof navigator.mediaDevices.getDisplayMedia === 'function')
    .map(([kind, label]) => el('button', { type: 'button', textContent: label, className: 'secondary', value: kind }));
  const begin = el('button', { type: 'button', textContent: 'Start recording', hidden: true });
  const cancel = el('button', { type: 'button', textContent: 'Cancel', className: 'secondary', hidden: true });
  const stop = el('button', { type: 'button', textContent: 'Stop', hidden: true });
  const pause = el('button', { type: 'button', textContent: 'Pause', className: 'secondary', hidden: true });
  const again = el('button', { type: 'button', textContent: 'Record again', className: 'secondary', hidden: true });
  const status = el('p', { className: 'recorder-status' });
  status.setAttribute('role', 'status');
  const preview = el('video', { className: 'recorder-preview', playsInline: true, hidden: true });
  const kindField = el('input', { type: 'hidden', name: 'media_kind' });
  const uploadField = el('input', { type: 'hidden', name: 'upload' });
  // A still of the recording's first second, sent with it as its poster (a JPEG, checked again by
  // the server): what its player shows until it plays, and what its mails show.
  const posterField = el('input', { type: 'hidden', name: 'poster' });
  const takePoster = () => {
    const w = preview.videoWidth;
    const h = preview.videoHeight;
    if (!w || !h) return;
    const scale = Math.min(1, 480 / w);
    const canvas = el('canvas', { width: Math.round(w * scale), height: Math.round(h * scale) });
    canvas.getContext('2d').drawImage(preview, 0, 0, canvas.width, canvas.height);
    // Within the server's 44 KB (its data URL within a form field): less quality until it fits.
    for (const quality of [0.75, 0.6, 0.45]) {
      const url = canvas.toDataURL('image/jpeg', quality);
      if (url.startsWith('data:image/jpeg;base64,') && url.length <= 60_000) {
        posterField.value = url;
        return;
      }
    }
  };
  const buttons = el('p', { className: 'recorder-buttons' });
  buttons.append(...starts, begin, cancel, pause, stop, again);
  // Before recording: which camera and microphone, and the camera over a screen recording.
  const choice = (label, name) => {
    const select = el('select', { name: '', id: `recorder-${name}` });
    const row = el('p', { className: 'recorder-device', hidden: true });
    row.append(el('label', { textContent: label, htmlFor: select.id }), select);
    return { row, select };
  };
  const camera = choice('Camera', 'camera');
  const microphone = choice('Microphone', 'microphone');
  const bubble = el('input', { type: 'checkbox', id: 'recorder-bubble', checked: true });
  const bubbleRow = el('p', { className: 'check recorder-device', hidden: true });
  bubbleRow.append(bubble, el('label', { textContent: 'Show my camera in a corner', htmlFor: bubble.id }));
  const countdown = el('p', { className: 'recorder-countdown', hidden: true });
  countdown.setAttribute('aria-live', 'assertive');
  const devices = el('div', { className: 'recorder-devices' });
  devices.append(camera.row, microphone.row, bubbleRow);
  // Once recorded, the form says what it carries, in place of the file input.
  const fileRow = input.closest('p');
  const attached = el('p', { className: 'recording-attached', hidden: true });
  box.append(buttons, status, devices, countdown, preview, kindField, uploadField, posterField);
  fileRow.before(box);
  fileRow.after(attached);
  const NAMES = { video: 'a video recording', screen: 'a screen recording', audio: 'an audio recording' };
  const attach = (kind, seconds) => {
    attached.textContent = `Attached: ${NAMES[kind] || 'a recording'} of ${clock(seconds)}. “Record again” replaces it.`;
    attached.hidden = false;
    fileRow.hidden = true;
  };
  const detach = () => {
    attached.hidden = true;
    fileRow.hidden = false;
  };
  // A recording not yet sent is not lost without a word: the browser asks before the page goes.
  window.addEventListener('beforeunload', (e) => {
    if (submitting || (!recorder && attached.hidden)) return;
    e.preventDefault();
    e.returnValue = '';
  });
  form.addEventListener('submit', () => {
    submitting = submitting || !upload || upload.done || upload.failed;
  });

  let recorder = null;
  let streams = [];
  let timer = 0;
  // The upload of the current recording: { tus, done, failed, percent } while there is one.
  let upload = null;
  let submitting = false;
  // The form's own submit(): its `submit` field (the form token) hides the method by that name.
  const send = () => HTMLFormElement.prototype.submit.call(form);

  // tus-js-client, loaded once, when someone first records; null where it cannot load.
  let uploader = null;
  const loadUploader = () => {
    uploader ??= new Promise((resolve) => {
      if (!form.dataset.uploader) return resolve(null);
      const script = el('script', { src: form.dataset.uploader });
      script.onload = () => resolve(window.tus?.isSupported ? window.tus : null);
      script.onerror = () => resolve(null);
      document.head.append(script);
    });
    return uploader;
  };

  // Sends the recording's chunks as they come (`chunks` ends when the recording does).
  async function startUpload(chunks, type, filename) {
    const tus = await loadUploader();
    const csrf = form.querySelector('input[name=csrf]')?.value;
    if (!tus || !csrf) return null;
    const state = { done: false, failed: false, percent: 0, tus: null };
    state.tus = new tus.Upload(chunks.getReader(), {
      endpoint: '/uploads',
      uploadLengthDeferred: true,
      chunkSize: 1024 * 1024,
      retryDelays: [0, 1000, 3000, 5000, 10000, 20000],
      storeFingerprintForResuming: false,
      metadata: { conversation: form.dataset.conversation || '', csrf, filetype: type, filename },
      onProgress: (sent, total) => {
        state.percent = total ? Math.floor((sent / total) * 100) : 0;
        if (submitting) status.textContent = `Sending your recording… ${state.percent}%`;
      },
      onSuccess: () => {
        state.done = true;
        if (upload !== state) return;
        uploadField.value = state.tus.url.split('/').pop();
        // The bytes are on the server: the form names them instead of sending them again.
        input.value = '';
        if (submitting) send();
      },
      onError: () => {
        state.failed = true;
        if (upload !== state) return;
        // The form sends the recording itself instead (the file input still holds it).
        uploadField.value = '';
        if (submitting) send();
      },
    });
    state.tus.start();
    return state;
  }

  const forget = () => {
    if (upload && !upload.done && !upload.failed) upload.tus.abort(true).catch(() => {});
    upload = null;
    uploadField.value = '';
  };

  form.addEventListener('submit', (e) => {
    if (!upload || upload.done || upload.failed || submitting) return;
    // Wait for the last bytes of the upload, then post (or post the file if it fails).
    e.preventDefault();
    submitting = true;
    status.textContent = `Sending your recording… ${upload.percent}%`;
  });

  // What is drawn on the canvas of a screen recording with the camera over it, while it is.
  let compositor = 0;
  const release = () => {
    for (const s of streams) for (const t of s.getTracks()) t.stop();
    streams = [];
    clearInterval(timer);
    clearInterval(compositor);
    clearTimeout(counting);
  };
  // idle: the three starts; ready: the preview, the devices, Start and Cancel; counting and
  // recording: Pause and Stop (counting: Cancel).
  const show = (phase) => {
    for (const b of starts) b.hidden = phase !== 'idle';
    begin.hidden = phase !== 'ready';
    cancel.hidden = phase !== 'ready' && phase !== 'counting';
    devices.hidden = phase !== 'ready';
    countdown.hidden = phase !== 'counting';
    stop.hidden = phase !== 'recording';
    pause.hidden = phase !== 'recording';
    pause.textContent = 'Pause';
  };

  const chosen = (select) => (select.value ? { deviceId: { exact: select.value } } : true);
  async function capture(kind) {
    const audio = chosen(microphone.select);
    if (kind === 'audio') return [await navigator.mediaDevices.getUserMedia({ audio })];
    if (kind === 'video') return [await navigator.mediaDevices.getUserMedia({ video: chosen(camera.select), audio })];
    const screen = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: true });
    // The screen with the voice over it, when the microphone may be used; else the screen alone.
    const voice = await navigator.mediaDevices.getUserMedia({ audio }).catch(() => null);
    const face = bubble.checked
      ? await navigator.mediaDevices.getUserMedia({ video: chosen(camera.select) }).catch(() => null)
      : null;
    return [screen, voice, face].filter(Boolean);
  }

  // The devices to choose from, named once a permission lets the browser say their names: the
  // camera where the recording uses one (a video, or a screen with the bubble), the microphone.
  async function listDevices(kind, tracks) {
    const found = await navigator.mediaDevices.enumerateDevices().catch(() => []);
    const fill = ({ row, select }, type, track, used) => {
      const list = found.filter((d) => d.kind === type && d.deviceId);
      select.replaceChildren(
        ...list.map((d, i) => el('option', { value: d.deviceId, textContent: d.label || `Device ${i + 1}` })),
      );
      const using = track?.getSettings?.().deviceId;
      if (using) select.value = using;
      row.hidden = !used || list.length === 0;
    };
    const cameras = found.some((d) => d.kind === 'videoinput');
    const video = tracks.find((t) => t.kind === 'video' && !t.getSettings?.().displaySurface);
    fill(camera, 'videoinput', video, kind === 'video' || (kind === 'screen' && bubble.checked));
    fill(
      microphone,
      'audioinput',
      tracks.find((t) => t.kind === 'audio'),
      true,
    );
    bubbleRow.hidden = kind !== 'screen' || !cameras;
  }

  // The screen with the camera in a circle in its corner, drawn on a canvas (30 times a second
  // while the page may draw: a hidden tab draws less often, as the browser allows).
  function composite(screenStream, faceStream) {
    const canvas = el('canvas');
    const ctx = canvas.getContext('2d');
    const screenVideo = el('video', { muted: true, playsInline: true, srcObject: screenStream });
    const faceVideo = el('video', { muted: true, playsInline: true, srcObject: faceStream });
    screenVideo.play().catch(() => {});
    faceVideo.play().catch(() => {});
    const draw = () => {
      const w = screenVideo.videoWidth || 1280;
      const h = screenVideo.videoHeight || 720;
      if (canvas.width !== w || canvas.height !== h) Object.assign(canvas, { width: w, height: h });
      ctx.drawImage(screenVideo, 0, 0, w, h);
      const d = Math.round(Math.min(w, h) * 0.28);
      const fw = faceVideo.videoWidth;
      const fh = faceVideo.videoHeight;
      if (!fw || !fh) return;
      const side = Math.min(fw, fh);
      const x = w - d - Math.round(d / 6);
      const y = h - d - Math.round(d / 6);
      ctx.save();
      ctx.beginPath();
      ctx.arc(x + d / 2, y + d / 2, d / 2, 0, 2 * Math.PI);
      ctx.clip();
      ctx.drawImage(faceVideo, (fw - side) / 2, (fh - side) / 2, side, side, x, y, d, d);
      ctx.restore();
    };
    draw();
    compositor = setInterval(draw, 1000 / 30);
    return canvas.captureStream(30);
  }

  let prepared = null;
  let counting = 0;
  async function prepare(kind) {
    again.hidden = true;
    release();
    status.textContent = 'Asking for your permission…';
    try {
      streams = await capture(kind);
    } catch (err) {
      release();
      show('idle');
      status.textContent =
        err && err.name === 'NotAllowedError'
          ? 'Recording was not allowed. You can still write a reply, or choose a file below.'
          : err && err.name === 'NotFoundError'
            ? 'No camera or microphone was found. You can still write a reply, or choose a file below.'
            : 'Recording could not start here. You can still write a reply, or choose a file below.';
      return;
    }
    const all = streams.flatMap((s) => s.getTracks());
    await listDevices(kind, all);
    let tracks = all;
    if (kind === 'screen' && streams.length > 1) {
      const face = streams.find((s) => s.getVideoTracks().length > 0 && s !== streams[0]);
      if (face) {
        const drawn = composite(new MediaStream(streams[0].getVideoTracks()), face);
        tracks = [...drawn.getVideoTracks(), ...all.filter((t) => t.kind === 'audio')];
        streams.push(drawn);
      }
    }
    const stream = new MediaStream(tracks);
    const hasVideo = tracks.some((t) => t.kind === 'video');
    preview.hidden = !hasVideo;
    preview.controls = false;
    preview.muted = true;
    preview.removeAttribute('src');
    preview.srcObject = stream;
    if (hasVideo) preview.play().catch(() => {});
    prepared = { kind, stream, hasVideo };
    show('ready');
    status.textContent =
      kind === 'audio'
        ? 'Your microphone is ready. Start when you are.'
        : kind === 'screen'
          ? 'This is what will be recorded. Start when you are.'
          : 'This is how you look. Start when you are.';
    begin.focus();
  }

  // 3, 2, 1, then the recording starts (Cancel stops it before).
  function count(from) {
    show('counting');
    countdown.textContent = String(from);
    status.textContent = `Recording starts in ${from}…`;
    counting = setTimeout(() => (from > 1 ? count(from - 1) : record()), 1000);
  }

  function record() {
    if (!prepared) return;
    const { kind, stream, hasVideo } = prepared;
    prepared = null;
    posterField.value = '';
    const mimeType = CANDIDATES[hasVideo ? 'video' : 'audio'].find((t) => MediaRecorder.isTypeSupported(t));
    recorder = new MediaRecorder(stream, mimeType ? { mimeType } : {});
    const type = bare(recorder.mimeType || mimeType || (hasVideo ? 'video/webm' : 'audio/webm'));
    const filename = `recording.${EXTENSIONS[type] || 'webm'}`;
    const chunks = [];
    let sending = null;
    const sent = new ReadableStream({
      start(controller) {
        sending = controller;
      },
    });
    forget();
    // Where no upload can be made, the form sends the recording itself.
    startUpload(sent, type, filename).then(
      (state) => {
        upload = state;
      },
      () => {},
    );
    recorder.ondataavailable = (e) => {
      if (e.data.size === 0) return;
      chunks.push(e.data);
      sending.enqueue(e.data);
    };
    recorder.onstop = () => {
      if (hasVideo && !posterField.value) takePoster();
      release();
      show('idle');
      sending.close();
      const file = new File(chunks, filename, { type });
      const files = new DataTransfer();
      files.items.add(file);
      input.files = files.files;
      kindField.value = kind;
      preview.srcObject = null;
      preview.muted = false;
      preview.controls = true;
      preview.src = URL.createObjectURL(file);
      if (posterField.value) preview.poster = posterField.value;
      preview.hidden = !hasVideo;
      again.hidden = false;
      status.textContent = `Recorded ${clock(seconds)}. Play it back, record again, or send it.`;
      attach(kind, seconds);
      recorder = null;
    };
    // The time recorded: paused time does not count against the limit.
    let seconds = 0;
    let last = Date.now();
    const tick = () => {
      const now = Date.now();
      if (recorder?.state === 'recording') seconds += (now - last) / 1000;
      last = now;
      if (recorder?.state === 'paused') {
        status.textContent = `Paused at ${clock(seconds)} of ${clock(maxSeconds)}`;
        return;
      }
      status.textContent = `Recording ${clock(seconds)} of ${clock(maxSeconds)}`;
      if (hasVideo && !posterField.value && seconds >= 1) takePoster();
      if (seconds >= maxSeconds && recorder?.state === 'recording') recorder.stop();
    };
    tickNow = tick;
    // The recording's own end (a screen share stopped from the browser's bar) stops it too.
    for (const t of streams.flatMap((s) => s.getTracks()))
      t.addEventListener('ended', () => recorder && recorder.state !== 'inactive' && recorder.stop());
    recorder.start(1000);
    show('recording');
    tick();
    timer = setInterval(tick, 250);
    stop.focus();
  }

  let tickNow = () => {};
  for (const b of starts) b.addEventListener('click', () => prepare(b.value));
  begin.addEventListener('click', () => count(3));
  cancel.addEventListener('click', () => {
    release();
    prepared = null;
    preview.srcObject = null;
    preview.hidden = true;
    show('idle');
    status.textContent = '';
  });
  // Another camera or microphone, or the bubble on or off: the preview starts again with it.
  for (const select of [camera.select, microphone.select]) {
    select.addEventListener('change', () => prepared && prepare(prepared.kind));
  }
  bubble.addEventListener('change', () => prepared && prepare(prepared.kind));
  stop.addEventListener('click', () => recorder && recorder.state !== 'inactive' && recorder.stop());
  pause.addEventListener('click', () => {
    if (recorder?.state === 'recording') {
      tickNow();
      recorder.pause();
      pause.textContent = 'Resume';
    } else if (recorder?.state === 'paused') {
      tickNow();
      recorder.resume();
      pause.textContent = 'Pause';
    }
    tickNow();
  });
  again.addEventListener('click', () => {
    forget();
    input.value = '';
    kindField.value = '';
    posterField.value = '';
    preview.removeAttribute('poster');
    preview.hidden = true;
    preview.removeAttribute('src');
    again.hidden = true;
    status.textContent = '';
    detach();
  });
})();

// Live updates (docs/pages.md, "Live conversations"): a conversation's page and its embed follow
// the conversation's event stream, the team's inbox the account's. EventSource reconnects by
// itself and says where it was (Last-Event-ID), so nothing is missed. An event carries ids only:
// a new message is fetched as the page renders it and appears in place, announced politely to
// screen readers; a hidden or deleted one leaves; the members and the inbox rows are read again
// from the page itself.
(() => {
  const conversation = document.querySelector('article.conversation[data-events]');
  const inbox = document.querySelector('#inbox-list[data-events]');
  if ((!conversation && !inbox) || typeof EventSource === 'undefined') return;

  const status = document.createElement('p');
  status.id = 'live-status';
  status.className = 'visually-hidden';
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');
  document.querySelector('main')?.append(status);
  const announce = (text) => {
    status.textContent = '';
    setTimeout(() => {
      status.textContent = text;
    }, 100);
  };

  // The stream, opened again (from the last position it gave) when the server ends it for good
  // (a 503 from a full replica, a 429), with a growing pause, a few times.
  const follow = (url, handlers) => {
    let last = '';
    let pause = 2000;
    let tries = 0;
    const open = () => {
      const at = new URL(url, location.href);
      if (last) at.searchParams.set('after', last);
      const source = new EventSource(at);
      for (const [name, handle] of Object.entries(handlers)) {
        source.addEventListener(name, (e) => {
          if (e.lastEventId) last = e.lastEventId;
          pause = 2000;
          tries = 0;
          handle(JSON.parse(e.data || '{}'), source);
        });
      }
      source.addEventListener('error', () => {
        if (source.readyState !== EventSource.CLOSED || ++tries > 6) return;
        setTimeout(open, pause);
        pause = Math.min(pause * 2, 60000);
      });
    };
    open();
  };

  /** The page as it is now, parsed (the members, the inbox rows). */
  const fresh = async () => {
    const res = await fetch(location.href, { headers: { accept: 'text/html' } });
    return res.ok ? new DOMParser().parseFromString(await res.text(), 'text/html') : null;
  };
  const later = (fn, ms) => {
    let timer = 0;
    return () => {
      clearTimeout(timer);
      timer = setTimeout(fn, ms);
    };
  };

  if (conversation) {
    const itemOf = (id) => document.getElementById(`message-${id}`)?.closest('li');
    const idOf = (li) => Number(li.querySelector('article.message')?.id.replace('message-', ''));
    // A message shown again is fetched with its thread (`?thread`): its replies went with it.
    const fetchItem = async (id, withThread) => {
      const at = new URL(conversation.dataset.messages.replace('{id}', String(id)), location.href);
      if (withThread) at.searchParams.set('thread', '1');
      const res = await fetch(at, { headers: { accept: 'text/html' } });
      if (!res.ok) return null;
      const t = document.createElement('template');
      t.innerHTML = (await res.text()).trim();
      return t.content.firstElementChild;
    };
    const list = () => {
      let ol = conversation.querySelector('ol.messages');
      if (ol) return ol;
      ol = document.createElement('ol');
      ol.className = 'messages';
      ol.setAttribute('aria-labelledby', 'messages-heading');
      const empty = document.getElementById('no-messages');
      if (empty) empty.replaceWith(ol);
      else document.getElementById('messages-heading')?.after(ol);
      return ol;
    };
    const repliesText = (n) => (n === 1 ? '1 reply' : `${n} replies`);
    // A thread's count under its first message, as the page says it: "3 replies, the latest 2 below".
    const recount = (preview, by) => {
      const count = Math.max(0, Number(preview.dataset.count || 0) + by);
      preview.dataset.count = String(count);
      const shown = preview.querySelector('ol').children.length;
      const line = preview.querySelector('.thread-count');
      const link = line.querySelector('a');
      link.textContent = repliesText(count);
      line.replaceChildren(link, count > shown ? `, the latest ${shown === 1 ? 'one' : shown} below` : '');
      if (count === 0) preview.remove();
    };
    // The thread under a message of the conversation (made for its first reply): its count links to its page.
    const threadOf = (rootLi, rootId) => {
      const found = rootLi.querySelector(':scope > .thread-preview');
      if (found) return found;
      const preview = document.createElement('div');
      preview.className = 'thread-preview';
      preview.dataset.count = '0';
      const line = document.createElement('p');
      line.className = 'thread-count';
      const link = document.createElement('a');
      const at = new URL(rootLi.querySelector(':scope > article .message-head > a')?.href || location.href);
      at.hash = '';
      at.search = '';
      at.pathname = `${at.pathname.replace(/\/$/, '')}/m/${rootId}`;
      link.href = at.href;
      if (document.body.classList.contains('embed')) link.target = '_blank';
      line.append(link);
      const ol = document.createElement('ol');
      ol.className = 'messages thread-replies';
      ol.setAttribute('aria-label', 'Latest replies in this thread');
      preview.append(line, ol);
      rootLi.querySelector(':scope > article')?.after(preview);
      return preview;
    };
    // In its place among the others (oldest first), once: a thread reply under its thread's first
    // message (when this page shows it).
    const show = async (id, shownAgain) => {
      if (!id || itemOf(id)) return;
      const li = await fetchItem(id, shownAgain);
      if (!li || itemOf(id)) return;
      const rootId = Number(li.dataset.thread || 0);
      let preview = null;
      let ol;
      if (rootId) {
        const rootLi = itemOf(rootId);
        if (!rootLi || rootLi.dataset.thread) return;
        preview = threadOf(rootLi, rootId);
        ol = preview.querySelector('ol');
      } else {
        ol = list();
      }
      const after = [...ol.children].find((other) => idOf(other) > id);
      ol.insertBefore(li, after ?? null);
      if (preview) recount(preview, 1);
      showLocalTimes(li);
      watchPlays(li);
      showMoments(li);
      const who = li.querySelector('.author')?.textContent || 'Someone';
      const what = rootId ? 'reply in a thread' : 'message';
      announce(shownAgain ? `A ${what} by ${who} is shown again.` : `New ${what} from ${who}.`);
      if (!shownAgain && li.getBoundingClientRect().top > window.innerHeight) cue(li, who);
    };
    // A message that arrives below the screen (the reader scrolled up to read): a button at the
    // bottom says so and takes them there; it goes once the message is seen.
    let cueButton = null;
    const cue = (li, who) => {
      cueButton?.remove();
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'new-message-cue';
      button.textContent = `New message from ${who} ↓`;
      button.addEventListener('click', () => {
        li.scrollIntoView({ block: 'start' });
        li.querySelector('a, button')?.focus({ preventScroll: true });
        button.remove();
      });
      document.body.append(button);
      cueButton = button;
      const seen = new IntersectionObserver((entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        seen.disconnect();
        button.remove();
      });
      seen.observe(li);
    };
    const remove = (id) => {
      const li = itemOf(id);
      if (!li) return;
      // The reply form, when it was replying in this thread, goes back to the conversation first.
      li.querySelector('.reply-elsewhere button')?.click();
      const preview = li.dataset.thread ? li.closest('.thread-preview') : null;
      li.remove();
      if (preview) recount(preview, -1);
      announce('A message was removed.');
    };
    const members = later(async () => {
      const page = await fresh();
      const now = page?.getElementById('members-heading')?.nextElementSibling;
      const shown = document.getElementById('members-heading')?.nextElementSibling;
      if (now && shown) shown.replaceWith(document.importNode(now, true));
    }, 300);
    // A receipt that changed ("Played by Pat"), read again where this page shows it.
    const receipt = async (id) => {
      const shown = document.getElementById(`played-${id}`);
      if (!shown) return;
      const at = new URL(`${conversation.dataset.messages.replace('{id}', String(id))}/played`, location.href);
      const res = await fetch(at, { headers: { accept: 'text/html' } });
      if (!res.ok) return;
      const t = document.createElement('template');
      t.innerHTML = (await res.text()).trim();
      const now = t.content.firstElementChild;
      if (now) shown.replaceWith(now);
    };
    // Reactions that changed, read again (they show under every message this page shows).
    const reacted = async (id) => {
      if (!document.getElementById(`message-${id}`) || document.body.classList.contains('embed')) return;
      const at = new URL(`${conversation.dataset.messages.replace('{id}', String(id))}/reactions`, location.href);
      at.searchParams.set('fragment', '1');
      // The set stays open where the reader opened it.
      if (document.querySelector(`#reactions-${id} input[name="picker"]`)) at.searchParams.set('picker', 'inline');
      const res = await fetch(at, { headers: { accept: 'text/html' } });
      if (res.ok) showReactions(id, await res.text());
    };
    // A transcript made or corrected: the player gains its captions (a track added to it, so a
    // recording playing goes on) and the words under it are read again.
    const transcribed = async (id) => {
      const li = itemOf(id);
      const figure = li?.querySelector(':scope > article figure.recording');
      if (!figure) return;
      const now = await fetchItem(id, false);
      const track = now?.querySelector(':scope > article figure.recording track');
      const player = figure.querySelector('video, audio');
      if (track && player && !player.querySelector('track')) player.append(document.importNode(track, true));
      const parts =
        ':scope > article > .transcript, :scope > article > .transcript-fix, :scope > article > .transcript-status';
      for (const old of li.querySelectorAll(parts)) old.remove();
      figure.after(...[...(now?.querySelectorAll(parts) ?? [])].map((part) => document.importNode(part, true)));
    };
    follow(conversation.dataset.events, {
      posted: (d) => show(d.message_id, false),
      transcribed: (d) => transcribed(d.message_id),
      played: (d) => receipt(d.message_id),
      reacted: (d) => reacted(d.message_id),
      shown: (d) => show(d.message_id, true),
      hidden: (d) => remove(d.message_id),
      deleted: (d) => remove(d.message_id),
      members: () => members(),
      // Away too long to say what changed: the reader reloads when they choose (a draft is kept).
      reset: (_, source) => {
        source.close();
        const note = document.createElement('p');
        note.className = 'notice';
        note.innerHTML = 'This conversation changed while you were away. <a href="">Reload it</a> to see it.';
        conversation.prepend(note);
        announce('This conversation changed while you were away: reload it to see it.');
      },
      end: (_, source) => source.close(),
    });
  }

  // "Reply in thread", inline: the page's one reply form moves under the message, names its thread
  // (`parent`), and goes back when asked. Without JavaScript the link opens the thread's page.
  const replySection = document.getElementById('reply');
  const replyForm = replySection?.querySelector('form.reply');
  const messages = document.querySelector('article.conversation:not(.thread) ol.messages');
  if (replySection && replyForm && messages) {
    const home = document.createElement('div');
    home.hidden = true;
    replySection.before(home);
    const heading = replySection.querySelector('#reply-heading');
    const headingText = heading?.textContent ?? 'Reply';
    const picker = replySection.querySelector('.template-picker');
    const parent = document.createElement('input');
    parent.type = 'hidden';
    parent.name = 'parent';
    const away = document.createElement('p');
    away.className = 'reply-elsewhere';
    const back = document.createElement('button');
    back.type = 'button';
    back.className = 'secondary';
    back.textContent = 'Reply to the conversation instead';
    away.append(back);
    back.addEventListener('click', () => {
      home.after(replySection);
      parent.remove();
      away.remove();
      if (heading) heading.textContent = headingText;
      if (picker) picker.hidden = false;
      replySection.querySelector('textarea')?.focus();
    });
    messages.addEventListener('click', (e) => {
      const link = e.target instanceof Element ? e.target.closest('.thread-link a') : null;
      const li = link?.closest('li');
      const id = li?.querySelector(':scope > article.message')?.id.replace('message-', '');
      if (!li || !id) return;
      e.preventDefault();
      parent.value = id;
      replyForm.prepend(parent);
      if (heading) heading.textContent = 'Reply in this thread';
      heading?.after(away);
      // A template opens the page again (its form is plain GET): not offered inside a thread.
      if (picker) picker.hidden = true;
      li.append(replySection);
      replySection.querySelector('textarea')?.focus();
    });
  }

  if (inbox) {
    const refresh = later(async () => {
      const page = await fresh();
      const now = page?.getElementById('inbox-list');
      if (!now) return;
      inbox.replaceChildren(...[...now.childNodes].map((n) => document.importNode(n, true)));
      showLocalTimes(inbox);
      announce('New activity in the inbox.');
    }, 300);
    follow(inbox.dataset.events, { conversation: () => refresh(), end: (_, source) => source.close() });
  }
})();

// The inbox by keyboard: j and k move to the next and the previous conversation (its link takes
// the focus, so Enter opens it), as in mail clients. Keys typed into a field are left alone.
(() => {
  const note = document.querySelector('.keys-note');
  if (!document.querySelector('ol.inbox[data-keys]')) return;
  if (note) note.hidden = false;
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'j' && e.key !== 'k') return;
    if (e.altKey || e.ctrlKey || e.metaKey || e.isComposing) return;
    if (e.target instanceof Element && e.target.closest('input, select, textarea, [contenteditable]')) return;
    const links = [...document.querySelectorAll('ol.inbox[data-keys] .inbox-title a')];
    if (links.length === 0) return;
    const at = links.indexOf(document.activeElement);
    const next = at === -1 ? 0 : Math.min(links.length - 1, Math.max(0, at + (e.key === 'j' ? 1 : -1)));
    e.preventDefault();
    links[next].focus();
    links[next].closest('li')?.scrollIntoView({ block: 'nearest' });
  });
})();

// The workflow step editor: only the fields of the chosen trigger and action show (without
// JavaScript every field shows, each label saying when it counts); a blank "Add a step" shows
// nothing but its trigger until one is chosen.
(() => {
  const sync = (step) => {
    const trigger = step.querySelector('[data-choose="trigger"]')?.value ?? '';
    const action = step.querySelector('[data-choose="action"]')?.value ?? '';
    for (const p of step.querySelectorAll(':scope > p')) {
      if (p.querySelector('[data-choose="trigger"]')) continue;
      const shownFor = (kind, chosen) => !p.dataset[kind] || p.dataset[kind].split(' ').includes(chosen);
      p.hidden = trigger === '' || !shownFor('trigger', trigger) || !shownFor('action', action);
    }
  };
  for (const step of document.querySelectorAll('fieldset[data-step]')) {
    sync(step);
    step.addEventListener('change', (e) => {
      if (e.target instanceof Element && e.target.matches('[data-choose]')) sync(step);
    });
  }
})();

// A recording this browser cannot play (a codec it lacks, such as VP9 in MP4 on Safari) says so
// beside its player and points to its download, instead of a player that never starts. Media
// errors do not bubble: they are caught on their way down, for players added live too.
document.addEventListener(
  'error',
  (e) => {
    const player = e.target;
    if (!(player instanceof HTMLMediaElement)) return;
    const figure = player.closest('figure.recording');
    const code = player.error?.code;
    if (!figure || (code !== MediaError.MEDIA_ERR_SRC_NOT_SUPPORTED && code !== MediaError.MEDIA_ERR_DECODE)) return;
    if (figure.querySelector('.recording-unplayable')) return;
    const note = document.createElement('p');
    note.className = 'recording-unplayable';
    note.setAttribute('role', 'status');
    note.textContent =
      'This browser cannot play this recording. Download it to play it in another app, or open the page in another browser.';
    figure.append(note);
  },
  true,
);

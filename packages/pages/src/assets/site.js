// The site's one script, of its own origin (the CSP allows no other). Pages work without it: it
// only shows times in the reader's own time zone ("2 hours ago" while recent; the exact local time
// on hover), and tells a page that frames an embed how tall the embed is.
(() => {
  const now = Date.now();
  const exact = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeStyle: 'short' });
  const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const steps = [
    [60, 1, 'second'],
    [3600, 60, 'minute'],
    [86400, 3600, 'hour'],
    [604800, 86400, 'day'],
  ];
  for (const time of document.querySelectorAll('time[datetime]')) {
    const at = new Date(time.getAttribute('datetime'));
    if (Number.isNaN(at.getTime())) continue;
    const local = exact.format(at);
    const seconds = Math.round((at.getTime() - now) / 1000);
    const step = steps.find(([limit]) => Math.abs(seconds) < limit);
    time.title = local;
    time.textContent = step ? relative.format(Math.round(seconds / step[1]), step[2]) : local;
  }

  // An embed tells the page around it its height: {type: 'convo:height', height} (see docs/pages.md).
  if (document.body.classList.contains('embed') && window.parent !== window) {
    let last = 0;
    const tell = () => {
      const height = Math.ceil(document.documentElement.scrollHeight);
      if (height === last) return;
      last = height;
      window.parent.postMessage({ type: 'convo:height', height, url: location.href }, '*');
    };
    tell();
    new ResizeObserver(tell).observe(document.documentElement);
  }
})();

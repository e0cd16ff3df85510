// A theme colour as the canvas needs it: the variable holds light-dark(),
// which only a styled element resolves. Each call forces a style
// recalculation; callers that paint often cache what it returns.
export function cssVar(name: string): string {
  const probe = document.createElement('span');
  probe.style.color = `var(${name})`;
  probe.style.display = 'none';
  document.body.appendChild(probe);
  const colour = getComputedStyle(probe).color;
  probe.remove();
  return colour || '#888';
}

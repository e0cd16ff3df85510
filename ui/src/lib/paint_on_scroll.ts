// Canvas views that follow a scroll box: `onResize` when the box changes
// size, `onScroll` on every scroll event, and `paint` at most once a frame
// after scrolling. Returns what undoes it (for an effect's cleanup).
export function paintOnScroll(
  element: HTMLElement,
  paint: () => void,
  onResize: () => void,
  onScroll: () => void = () => {},
): () => void {
  const observer = new ResizeObserver(onResize);
  observer.observe(element);
  let frame = 0;
  const scrolled = () => {
    onScroll();
    if (frame === 0) {
      frame = requestAnimationFrame(() => {
        frame = 0;
        paint();
      });
    }
  };
  element.addEventListener('scroll', scrolled, { passive: true });
  return () => {
    observer.disconnect();
    element.removeEventListener('scroll', scrolled);
    if (frame !== 0) cancelAnimationFrame(frame);
  };
}

// What a live tail holds: the records shown (newest first, at most
// `shownMax`) and, while paused, those that arrived since (at most
// `heldMax`; past that they are counted, not kept). Pure: unit-tested with
// node --test; the logs page feeds it from an EventSource.

export class TailBuffer<T> {
  private shownRecords: T[] = [];
  private held: T[] = [];
  private heldDropped = 0;
  private isPaused = false;
  // Records the server said it skipped (`missed` events).
  missed = 0;

  constructor(
    private readonly shownMax = 10_000,
    private readonly heldMax = 10_000,
  ) {}

  get shown(): readonly T[] {
    return this.shownRecords;
  }
  get paused(): boolean {
    return this.isPaused;
  }
  // Records that arrived while paused: kept and dropped.
  get waiting(): number {
    return this.held.length + this.heldDropped;
  }

  // A record, in arrival order.
  add(record: T): void {
    if (this.isPaused) {
      if (this.held.length < this.heldMax) this.held.push(record);
      else this.heldDropped += 1;
      return;
    }
    this.shownRecords = [record, ...this.shownRecords.slice(0, this.shownMax - 1)];
  }

  // Several records in arrival order (one render for a burst).
  addAll(records: readonly T[]): void {
    if (this.isPaused) {
      for (const r of records) this.add(r);
      return;
    }
    const newest = records.slice(-this.shownMax).reverse();
    this.shownRecords = [...newest, ...this.shownRecords].slice(0, this.shownMax);
  }

  pause(): void {
    this.isPaused = true;
  }

  // Shows what arrived while paused; returns how many were dropped.
  resume(): number {
    this.isPaused = false;
    const held = this.held;
    const dropped = this.heldDropped;
    this.held = [];
    this.heldDropped = 0;
    this.addAll(held);
    return dropped;
  }

  clear(): void {
    this.shownRecords = [];
    this.held = [];
    this.heldDropped = 0;
    this.missed = 0;
  }
}

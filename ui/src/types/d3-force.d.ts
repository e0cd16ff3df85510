// The part of d3-force (which ships no types) that lib/service_map.ts uses.
declare module 'd3-force' {
  interface Force {
    (alpha: number): void;
  }
  interface Simulation<N> {
    force(name: string, force: unknown): Simulation<N>;
    stop(): Simulation<N>;
    tick(iterations?: number): Simulation<N>;
    nodes(): N[];
  }
  interface LinkForce<N> extends Force {
    id(id: (node: N) => number | string): LinkForce<N>;
    distance(distance: number): LinkForce<N>;
  }
  interface PositionForce extends Force {
    strength(strength: number): PositionForce;
  }
  export function forceSimulation<N>(nodes: N[]): Simulation<N>;
  export function forceLink<N>(links: { source: number | string; target: number | string }[]): LinkForce<N>;
  export function forceManyBody(): PositionForce;
  export function forceCollide<N>(radius: (node: N) => number): Force;
  export function forceX(x: number): PositionForce;
  export function forceY(y: number): PositionForce;
}

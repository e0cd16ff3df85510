// Ordering the services table (pure: unit-tested with node --test).

import type { ServiceHealth } from './api';

export type SortKey = 'name' | 'rate' | 'error_rate' | 'p50' | 'p95' | 'p99' | 'spans';

function sortValue(service: ServiceHealth, key: SortKey): number | string {
  switch (key) {
    case 'name':
      return `${service.namespace}/${service.name}`;
    case 'rate':
      return service.rate ?? -1;
    case 'error_rate':
      return service.error_rate ?? -1;
    case 'p50':
      return Number(service.p50_nano ?? -1);
    case 'p95':
      return Number(service.p95_nano ?? -1);
    case 'p99':
      return Number(service.p99_nano ?? -1);
    case 'spans':
      return service.span_count;
  }
}

export function sortServices(services: ServiceHealth[], key: SortKey, descending: boolean) {
  const sorted = [...services].sort((a, b) => {
    const x = sortValue(a, key);
    const y = sortValue(b, key);
    const order = x < y ? -1 : x > y ? 1 : 0;
    return descending ? -order : order;
  });
  return sorted;
}


import { describe, expect, it } from 'vitest';
import { RECENT_LIMIT, oldestFirst, recentCache } from '../../../src/store/recent';

describe('recentCache', () => {
  it('should keep the 8 set last, a value set again becoming the newest, a look leaving the order', () => {
    const cache = recentCache<{ n: number }>();
    for (let n = 0; n < 9; n++) cache.set(`k${n}`, { n });
    expect(RECENT_LIMIT).toBe(8);
    expect([...oldestFirst(cache).keys()]).toEqual(['k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8']);
    cache.set('k1', { n: 10 });
    cache.peek('k2');
    cache.set('k9', { n: 9 });
    expect([...oldestFirst(cache).entries()]).toEqual([
      ['k3', { n: 3 }], ['k4', { n: 4 }], ['k5', { n: 5 }], ['k6', { n: 6 }], ['k7', { n: 7 }], ['k8', { n: 8 }], ['k1', { n: 10 }], ['k9', { n: 9 }],
    ]);
  });

  it('should list its entries without changing their order', () => {
    const cache = recentCache<{ n: number }>(2);
    cache.set('a', { n: 1 });
    cache.set('b', { n: 2 });
    expect([...oldestFirst(cache).keys()]).toEqual(['a', 'b']);
    cache.set('c', { n: 3 });
    expect([...oldestFirst(cache).keys()]).toEqual(['b', 'c']);
  });
});

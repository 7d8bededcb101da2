'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';

const PAGES = [
  { href: '/', label: 'Route handler', short: 'Node' },
  { href: '/edge', label: 'Edge route', short: 'Edge' },
  { href: '/action', label: 'Server action', short: 'Action' },
];

/** The three pages, the one shown marked (`aria-current="page"`); short labels on a narrow screen. */
export function Nav() {
  const pathname = usePathname();
  return (
    <nav data-testid="nav">
      {PAGES.map(({ href, label, short }) => (
        <Link key={href} href={href} aria-current={pathname === href ? 'page' : undefined} aria-label={label}>
          <span className="long">{label}</span>
          <span className="short" aria-hidden="true">
            {short}
          </span>
        </Link>
      ))}
    </nav>
  );
}

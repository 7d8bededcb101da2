'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';

const PAGES = [
  { href: '/', label: 'Route handler' },
  { href: '/edge', label: 'Edge route' },
  { href: '/action', label: 'Server action' },
];

/** The three pages, the one shown marked (`aria-current="page"`). */
export function Nav() {
  const pathname = usePathname();
  return (
    <nav data-testid="nav">
      {PAGES.map(({ href, label }) => (
        <Link key={href} href={href} aria-current={pathname === href ? 'page' : undefined}>
          {label}
        </Link>
      ))}
    </nav>
  );
}

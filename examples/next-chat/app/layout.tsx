import type { Metadata } from 'next';
import Link from 'next/link';
import type { ReactNode } from 'react';
import './globals.css';

export const metadata: Metadata = {
  title: 'next-chat · ai-compaction',
  description: 'A chat whose conversation is compacted to fit a small context window.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header>
          <strong>next-chat</strong>
          <nav>
            <Link href="/">Route handler</Link>
            <Link href="/edge">Edge route</Link>
            <Link href="/action">Server action</Link>
          </nav>
        </header>
        {children}
      </body>
    </html>
  );
}

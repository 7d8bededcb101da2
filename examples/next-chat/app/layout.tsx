import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Nav } from './nav';
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
          <Nav />
        </header>
        {children}
      </body>
    </html>
  );
}

import { ActionChat } from './action-chat';

export default function ActionPage() {
  return <ActionChat />;
}

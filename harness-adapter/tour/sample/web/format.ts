// Part of the cc-harness tour sample: a TypeScript file.
export interface Item {
  name: string;
  count: number;
  price: number;
}

export function formatItem(item: Item): string {
  return `${item.name}: ${item.count} x ${item.price.toFixed(2)}`;
}

export function formatAll(items: Item[]): string[] {
  return items.map(formatItem);
}
